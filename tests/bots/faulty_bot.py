"""A manni-bot/1 bot that misbehaves as its argument says, after ``AFTER`` good answers (default 0).

slow: sleeps 1 s before answering · crash: exits with code 3 · silent: never answers ·
garbage: answers a line that is not JSON · illegal: answers an action that is not legal ·
deaf: answers hello, never reads again, ignores bye and the end of its input ·
mute: never answers hello · good: plays the first legal action ·
nested: answers ``[[[[…`` 100,000 deep · deep: answers ``[[[[…`` 10,000 deep (a short line) ·
deep-hello: answers hello so · huge: answers a 20 MB line · flood: writes 4 MB of stderr before each
answer · start-crash: writes to stderr and exits before reading anything · fork: at hello starts a
sleeper with ``setsid`` (out of its process group; its command line ends with the third argument)
· fork-exit: the same, then exits at its first request (the sleeper is orphaned).
"""
import json
import subprocess
import sys
import time

mode = sys.argv[1]
after = int(sys.argv[2]) if len(sys.argv) > 2 else 0
signal_ignored = mode == "deaf"
if signal_ignored:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def say(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def shout(data):
    sys.stdout.write(data + "\n")
    sys.stdout.flush()


if mode == "start-crash":
    print("faulty bot: cannot start on purpose", file=sys.stderr)
    sys.exit(1)
answered = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        if mode == "mute":
            continue
        if mode == "deep-hello":
            shout("[" * 10_000)
            continue
        if mode.startswith("fork"):
            subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(120)", sys.argv[3]],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        say({"type": "hello", "protocol": "manni-bot/1", "name": f"faulty-{mode}"})
        if mode == "deaf":
            while True:
                time.sleep(1)
    elif message["type"] == "act":
        answered += 1
        if mode == "flood":
            sys.stderr.write(("x" * 1023 + "\n") * 4096 + f"flood {answered} done\n")
            sys.stderr.flush()
        if mode in ("good", "flood", "fork") or answered <= after:
            say({"action": message["legal"][0]})
        elif mode == "fork-exit":
            sys.exit(0)
        elif mode == "nested":
            shout("[" * 100_000)
        elif mode == "deep":
            shout("[" * 10_000)
        elif mode == "huge":
            shout(json.dumps({"action": message["legal"][0], "pad": "x" * 20_000_000}))
        elif mode == "slow":
            time.sleep(1)
            say({"action": message["legal"][0]})
        elif mode == "crash":
            print("faulty bot: crashing on purpose", file=sys.stderr)
            sys.exit(3)
        elif mode == "garbage":  # both lines in one write: the referee, refusing the first, closes the pipe
            sys.stdout.write(json.dumps("this is not an action") + "\n}{ not json\n")
            sys.stdout.flush()
        elif mode == "illegal":
            say({"action": 99})
    elif message["type"] == "bye":
        break
