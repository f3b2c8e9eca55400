# gdb script for Benchmarks/atomics: steps through one chain step (from one entry of the engine's
# `commit`, specialized for Automaton<Int, Int>, to the next) and lists its atomic instructions.
import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
# The engine's `commit`, specialized for Int state and input (the chain's automaton).
gdb.execute(r"rbreak ^\$s9Automaton0A6EngineC6commit_4from2to6effect.*FSi_SiTg5$", to_string=True)
gdb.execute('run --scale 10000 --repetitions 1 --only "chain Automaton$" chain > /dev/null')
gdb.execute("continue 200")  # warm up: every list and cache at its steady size
start = int(gdb.parse_and_eval("$pc"))
gdb.execute("delete")
architecture = gdb.selected_frame().architecture()
steps = 0
atomics = []
while True:
    gdb.execute("stepi", to_string=True)
    steps += 1
    pc = int(gdb.parse_and_eval("$pc"))
    if pc == start or steps > 50_000:
        break
    instruction = architecture.disassemble(pc)[0]["asm"]
    if "lock" in instruction or "xchg" in instruction:
        frame = gdb.selected_frame()
        caller = frame.older()
        atomics.append((frame.name() or "?", (caller.name() if caller else None) or "?", instruction))
print("instructions", steps)
print("atomics", len(atomics))
for function, caller, instruction in atomics:
    print("  %s <- %s: %s" % (function, caller, instruction))
gdb.execute("kill")
