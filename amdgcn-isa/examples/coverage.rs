//! Instruction coverage over real code objects: decodes every instruction of the `.text` of
//! each gfx90a ELF given and executes it once ([`amdgcn_isa::probe`]); prints a mnemonic
//! histogram with what is unsupported. `cargo run --release -p amdgcn-isa --example coverage -- a.elf b.elf`
use object::{Object, ObjectSection};
use std::collections::BTreeMap;

fn main() {
    // mnemonic -> (count, supported)
    let mut hist: BTreeMap<String, (u64, bool)> = BTreeMap::new();
    let mut undecodable = 0u64;
    for path in std::env::args().skip(1) {
        let b = std::fs::read(&path).unwrap();
        let Ok(f) = object::File::parse(&*b) else {
            eprintln!("{path}: not an ELF");
            continue;
        };
        let Some(t) = f.section_by_name(".text") else { continue };
        let code = t.data().unwrap();
        let mut off = 0;
        while off + 4 <= code.len() {
            let w = [0, 1, 2].map(|k| {
                let o = off + 4 * k;
                code.get(o..o + 4).map_or(0, |c| u32::from_le_bytes(c.try_into().unwrap()))
            });
            match amdgcn_isa::decode(w) {
                Ok(i) => {
                    let ok = amdgcn_isa::probe(w).is_ok();
                    let e = hist.entry(i.op.name().to_string()).or_insert((0, ok));
                    e.0 += 1;
                    e.1 &= ok;
                    off += i.size as usize;
                }
                Err(_) => {
                    undecodable += 1;
                    off += 4;
                }
            }
        }
    }
    let mut v: Vec<_> = hist.iter().collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1 .0));
    let (mut n, mut ok, mut dyn_n, mut dyn_ok) = (0, 0, 0u64, 0u64);
    for (name, (count, sup)) in &v {
        n += 1;
        dyn_n += count;
        if *sup {
            ok += 1;
            dyn_ok += count;
        } else {
            println!("UNSUPPORTED {name} x{count}");
        }
    }
    println!(
        "{ok}/{n} distinct mnemonics supported ({:.1}%), {dyn_ok}/{dyn_n} static instructions ({:.1}%), {undecodable} undecodable dwords",
        100.0 * ok as f64 / n.max(1) as f64,
        100.0 * dyn_ok as f64 / dyn_n.max(1) as f64
    );
}
