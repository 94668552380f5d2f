//! Gives the cdylib AMD's SONAME, so binaries linked against it record `libamdhip64.so.7`, and
//! ROCm's symbol versions (`hipMalloc@@hip_4.2`, …): a version script generated from
//! `abi/symbol-versions.txt`, one node per ROCm node, each inheriting the one before, as in ROCm's
//! `hip_hcc.map.in`. rustc gives a cdylib its own anonymous version script, which GNU ld will not
//! combine with named nodes; `tools/hipkfd-link` (the linker, `.cargo/config.toml`) drops rustc's
//! when ours is on the command line, and fails the link on an export the table does not list.
use std::fmt::Write as _;
use std::path::PathBuf;

/// The name tools/hipkfd-link recognises our version script by.
const SCRIPT_NAME: &str = "hipkfd-symbol-versions.map";

fn main() {
    let table_path = "abi/symbol-versions.txt";
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={table_path}");
    let table = std::fs::read_to_string(table_path).expect("read abi/symbol-versions.txt");

    // (node, symbols) in the table's order.
    let mut nodes: Vec<(String, Vec<String>)> = Vec::new();
    for (lineno, line) in table.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut fields = line.split_whitespace();
        let (Some(node), Some(sym), None) = (fields.next(), fields.next(), fields.next()) else {
            panic!("{table_path}:{}: expected `NODE SYMBOL`", lineno + 1);
        };
        match nodes.last_mut() {
            Some((last, syms)) if last == node => syms.push(sym.to_owned()),
            _ => {
                assert!(
                    nodes.iter().all(|(n, _)| n != node),
                    "{table_path}:{}: node {node} is not contiguous",
                    lineno + 1
                );
                nodes.push((node.to_owned(), vec![sym.to_owned()]));
            }
        }
    }

    let mut script = String::new();
    for (i, (node, syms)) in nodes.iter().enumerate() {
        writeln!(script, "{node} {{\nglobal:").unwrap();
        for sym in syms {
            writeln!(script, "    {sym};").unwrap();
        }
        if i + 1 == nodes.len() {
            writeln!(script, "local:\n    *;").unwrap();
        }
        match i.checked_sub(1) {
            Some(prev) => writeln!(script, "}} {};\n", nodes[prev].0).unwrap(),
            None => writeln!(script, "}};\n").unwrap(),
        }
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join(SCRIPT_NAME);
    std::fs::write(&out, script).expect("write the version script");

    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so.7");
    // The table lists all of ROCm's exports, most of which we do not define: rust-lld (rustc's
    // default linker on this target) refuses that unless told; GNU ld allows it by default.
    println!("cargo:rustc-cdylib-link-arg=-Wl,--undefined-version");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", out.display());
}
