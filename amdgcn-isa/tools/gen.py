import subprocess, re, sys
MC = __import__("os").environ.get("LLVM_MC", "llvm-mc")
def le(w): return ",".join("0x%02x"%((w>>(8*i))&0xff) for i in range(4))
def run(words):
    # words: list of (op, [dwords])
    inp="\n".join(",".join(le(d) for d in ds) for _,ds in words)
    p=subprocess.run([MC,"-arch=amdgcn","-mcpu=gfx90a","-disassemble","-show-encoding"],input=inp,capture_output=True,text=True)
    res={}
    encmap={tuple(ds):op for op,ds in words}
    for line in p.stdout.splitlines():
        m=re.match(r'\s+([a-z0-9_]+).*; encoding: \[(.*)\]',line)
        if not m: continue
        bs=[int(x,16) for x in m.group(2).split(",")]
        ds=tuple(sum(bs[i+j]<<(8*j) for j in range(4)) for i in range(0,len(bs),4))
        key=ds[:len(words[0][1])]
        if key in encmap:
            n=m.group(1)
            for suf in ("_e32","_e64","_sdwa","_dpp"):
                if n.endswith(suf): n=n[:-len(suf)]
            res[encmap[key]]=n
    return res
tabs={}
tabs['SOP2']=run([(op,[0x80000000|op<<23]) for op in range(0x60)])
tabs['SOPK']=run([(op,[0xB0000000|op<<23]) for op in range(32)])
tabs['SOP1']=run([(op,[0xBE800000|op<<8]) for op in range(256)])
tabs['SOPC']=run([(op,[0xBF000000|op<<16]) for op in range(128)])
tabs['SOPP']=run([(op,[0xBF800000|op<<16]) for op in range(128)])
tabs['SMEM']=run([(op,[0xC0000000|op<<18,0]) for op in range(256)])
tabs['VOP1']=run([(op,[0x7E000000|op<<9]) for op in range(256)])
tabs['VOP2']=run([(op,[op<<25|0x100]) for op in range(0x3E)])
tabs['VOPC']=run([(op,[0x7C000000|op<<17]) for op in range(256)])
tabs['VOP3']=run([(op,[0xD0000000|op<<16,0x00000100|0x100<<9|0x100<<18]) for op in range(0x380)])
tabs['VOP3P']=run([(op,[0xD3800000|op<<16,0x18000000|0x100|0x100<<9|0x100<<18]) for op in range(128)])
tabs['DS']=run([(op,[0xD8000000|op<<17,0]) for op in range(256)])
for seg,nm in ((0,'FLAT'),(1,'SCRATCH'),(2,'GLOBAL')):
    tabs[nm]=run([(op,[0xDC000000|op<<18|seg<<14,0x007f0000 if seg else 0]) for op in range(128)])
tabs['MUBUF']=run([(op,[0xE0000000|op<<18,0]) for op in range(128)])
import json
json.dump(tabs,open("tabs.json","w"),indent=0)
for k,v in tabs.items(): print(k,len(v))
v3={}
for s2 in (0x100, 0x80, 0):
    for s1 in (0x100, 0x80):
        r=run([(op,[0xD0000000|op<<16,0x00000100|s1<<9|s2<<18]) for op in range(0x1C0,0x380)])
        for k,v in r.items(): v3.setdefault(k,v)
tabs['VOP3']=v3
vp={}
for s2 in (0x100, 0):
    r=run([(op,[0xD3800000|op<<16,0x18000000|0x100|0x100<<9|s2<<18]) for op in range(128)])
    for k,v in r.items(): vp.setdefault(k,v)
tabs['VOP3P']=vp
json.dump(tabs,open("tabs.json","w"),indent=0)
for k,v in tabs.items(): print(k,len(v))
for s2 in (0x100, 0):
    r=run([(op,[0xD3804000|op<<16,0x18000000|0x100|0x100<<9|s2<<18]) for op in range(128)])
    for k,v in r.items(): vp.setdefault(k,v)
tabs['VOP3P']=vp
json.dump(tabs,open("tabs.json","w"),indent=0)
# Opcodes the sweep above misses (they need AGPR operands or a literal): added by hand from
# `llvm-mc -show-encoding` of each.
tabs['VOP1']['81']='v_swap_b32'
tabs['VOP1']['82']='v_accvgpr_mov_b32'
tabs['VOP2']['24']='v_madak_f32'
tabs['VOP2']['37']='v_madak_f16'
tabs['VOP3P']['88']='v_accvgpr_read_b32'
tabs['VOP3P']['89']='v_accvgpr_write_b32'
json.dump(tabs,open("tabs.json","w"),indent=0)
# GWS ops disassemble only with the GDS bit set.
for op, n in ((152, 'ds_gws_sema_release_all'), (153, 'ds_gws_init'), (154, 'ds_gws_sema_v'), (155, 'ds_gws_sema_br'), (156, 'ds_gws_sema_p'), (157, 'ds_gws_barrier')):
    tabs['DS'][str(op)] = n
json.dump(tabs,open("tabs.json","w"),indent=0)
