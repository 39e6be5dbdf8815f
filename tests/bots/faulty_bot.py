"""A manni-bot/1 bot that misbehaves as its argument says, after ``AFTER`` good answers (default 0).

slow: sleeps 1 s before answering · crash: exits with code 3 · silent: never answers ·
garbage: answers a line that is not JSON · illegal: answers an action that is not legal ·
deaf: answers hello, never reads again, ignores bye and the end of its input ·
mute: never answers hello · good: plays the first legal action.
"""
import json
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


answered = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "hello":
        if mode == "mute":
            continue
        say({"type": "hello", "protocol": "manni-bot/1", "name": f"faulty-{mode}"})
        if mode == "deaf":
            while True:
                time.sleep(1)
    elif message["type"] == "act":
        answered += 1
        if mode == "good" or answered <= after:
            say({"action": message["legal"][0]})
        elif mode == "slow":
            time.sleep(1)
            say({"action": message["legal"][0]})
        elif mode == "crash":
            print("faulty bot: crashing on purpose", file=sys.stderr)
            sys.exit(3)
        elif mode == "garbage":
            say("this is not an action")
            sys.stdout.write("}{ not json\n")
            sys.stdout.flush()
        elif mode == "illegal":
            say({"action": 99})
    elif message["type"] == "bye":
        break
