import json
t=json.load(open('tabs.json'))
names=[]
seen=set()
for enc in ['SOP2','SOPK','SOP1','SOPC','SOPP','SMEM','VOP1','VOP2','VOPC','VOP3','VOP3P','DS','FLAT','GLOBAL','SCRATCH','MUBUF']:
    for k,v in sorted(t[enc].items(), key=lambda kv:int(kv[0])):
        if v not in seen: seen.add(v); names.append(v)
sizes={'SOP2':0x60,'SOPK':32,'SOP1':256,'SOPC':128,'SOPP':128,'SMEM':256,'VOP1':256,'VOP2':64,'VOPC':256,'VOP3':1024,'VOP3P':128,'DS':256,'FLAT':128,'GLOBAL':128,'SCRATCH':128,'MUBUF':128}
o=[]
o.append("//! Opcode tables for gfx90a, one per encoding: opcode number -> mnemonic.")
o.append("//!")
o.append("//! GENERATED (amdgcn-isa/tools: `LLVM_MC=/usr/lib/llvm-15/bin/llvm-mc python3 gen.py && python3 genrs.py`)")
o.append("//! by disassembling every opcode of every encoding with LLVM 15 (hipcc.s) `llvm-mc")
o.append("//! -arch=amdgcn -mcpu=gfx90a -disassemble` (the `_e32`/`_e64`/`_sdwa`/`_dpp` suffixes dropped).")
o.append("//! VOP3 opcodes 0..=255 are VOPC, 256..=319 VOP2, 320..=383 VOP1 (GFX9 layout).")
o.append("")
o.append("/// Every gfx90a mnemonic, named as LLVM spells it.")
o.append("#[allow(non_camel_case_types, clippy::upper_case_acronyms)]")
o.append("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]")
o.append("#[repr(u16)]")
o.append("pub enum Op {")
for n in names: o.append("    %s,"%n)
o.append("}")
o.append("")
o.append("static NAMES: [&str; %d] = ["%len(names))
for n in names: o.append('    "%s",'%n)
o.append("];")
o.append("")
o.append("impl Op {")
o.append("    /// The LLVM mnemonic.")
o.append("    pub fn name(self) -> &'static str {")
o.append("        NAMES[self as usize]")
o.append("    }")
o.append("}")
o.append("")
o.append("use Op::*;")
def tab(enc, n, src):
    arr=["None"]*n
    for k,v in src.items(): arr[int(k)]="Some(%s)"%v
    o.append("/// %s opcode table."%enc)
    o.append("pub static %s: [Option<Op>; %d] = ["%(enc,n))
    for a in arr: o.append("    %s,"%a)
    o.append("];")
    o.append("")
for enc in sizes:
    if enc=='VOP3':
        src=dict(t['VOP3'])
        for k,v in t['VOPC'].items(): src[str(int(k))]=v
        for k,v in t['VOP2'].items(): src[str(256+int(k))]=v
        for k,v in t['VOP1'].items(): src[str(320+int(k))]=v
        tab(enc,1024,src)
    else:
        tab(enc,sizes[enc],t[enc])
open('optab.rs','w').write("\n".join(o)+"\n")
print(len(names))
