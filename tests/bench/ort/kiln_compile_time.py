#!/usr/bin/python3
"""Times Kiln's compile inside one warm process, as ort_session_time.js times ORT's session creation: the `kiln`
Python module (BUILD/python) loads the model, runs every pass and, with --history, records them in a new history
database (flushed before the clock stops); best and median of N after one warm-up. One JSON line.
usage: kiln_compile_time.py BUILD MODEL [RUNS] [--history DB]"""
import json
import os
import sys
import time


def main():
    args = sys.argv[1:]
    history = None
    if "--history" in args:
        i = args.index("--history")
        history = args[i + 1]
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__.splitlines()[-1])
    build, model = args[0], args[1]
    runs = int(args[2]) if len(args) > 2 else 5
    sys.path.insert(0, os.path.join(build, "python"))
    import kiln

    def once():
        if history:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(history + suffix):
                    os.remove(history + suffix)
        t = time.perf_counter()
        r = kiln.compile(model, history=history)
        ms = (time.perf_counter() - t) * 1000
        if not r.ok:
            raise RuntimeError(r.error)
        return ms

    try:
        once()
        times = sorted(once() for _ in range(runs))
    except (RuntimeError, kiln.Error) as e:
        print(str(e).strip().splitlines()[-1] if str(e).strip() else "failed", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"best_ms": times[0], "median_ms": times[len(times) // 2]}))


if __name__ == "__main__":
    main()
