"""Runs a systemd unit's ExecStart as systemd runs a Type=notify service, for the tests.

usage: systemd_service.py UNIT INSTANCE ENVFILE DIR [WATCHDOG_USEC]

As systemd.service(5) and systemd.exec(5) say: %i is the instance; ENVFILE stands for
the unit's EnvironmentFile= (KEY=VALUE lines, # and ; comments, values in quotes
unquoted); in ExecStart a word "$VAR" becomes the variable's words (split at white
space) and "${VAR}" one word. The service gets NOTIFY_SOCKET (a datagram socket this
process reads), WATCHDOG_USEC (when given) with WATCHDOG_PID, and stdout and stderr
files (DIR/stdout, DIR/stderr) whose device and inode JOURNAL_STREAM names, as the
journal's stream would be.

DIR/notify gets one line per assignment it was sent, "<seconds since start> <NAME=value>",
after a READY=1 "lines=<lines on stdout then>", and at the end "exit <code>" (a signal:
"exit -<signal>"). DIR/pid holds the service's pid once it runs.
"""
import os
import re
import select
import shlex
import socket
import sys
import time


def service_lines(unit):
    """The [Service] section's settings as (name, value) pairs, in order."""
    out, section = [], None
    with open(unit, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
            elif section == "[Service]" and "=" in line:
                name, value = line.split("=", 1)
                out.append((name.strip(), value.strip()))
    return out


def environment_file(path):
    env = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;" or "=" not in line:
                continue
            key, value = line.split("=", 1)
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            env[key.strip()] = value
    return env


def exec_argv(exec_start, instance, env):
    words = []
    for word in shlex.split(exec_start.replace("%i", instance)):
        whole = re.fullmatch(r"\$\{(\w+)\}", word)
        split = re.fullmatch(r"\$(\w+)", word)
        if whole:
            words.append(env.get(whole.group(1), ""))
        elif split:
            words.extend(env.get(split.group(1), "").split())
        else:
            words.append(re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), word))
    words[0] = words[0].lstrip("-@+!:")  # the executable's prefixes (systemd.service(5)) are no part of it
    return words


def main():
    unit, instance, env_file, out_dir = sys.argv[1:5]
    watchdog_usec = sys.argv[5] if len(sys.argv) > 5 else None
    settings = dict(service_lines(unit))
    file_env = environment_file(env_file)
    argv = exec_argv(settings["ExecStart"], instance, file_env)

    sock_path = os.path.join(out_dir, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    stdout = open(os.path.join(out_dir, "stdout"), "wb")
    stderr = open(os.path.join(out_dir, "stderr"), "wb")
    st = os.fstat(stderr.fileno())
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    for k in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):  # the sanitizers' build
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(file_env)
    env.update({"NOTIFY_SOCKET": sock_path, "JOURNAL_STREAM": "%d:%d" % (st.st_dev, st.st_ino),
                "INVOCATION_ID": "0" * 32})
    if watchdog_usec is not None:
        env["WATCHDOG_USEC"] = watchdog_usec

    log = open(os.path.join(out_dir, "notify"), "w", buffering=1)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.dup2(stdout.fileno(), 1)
        os.dup2(stderr.fileno(), 2)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        if watchdog_usec is not None:
            env["WATCHDOG_PID"] = str(os.getpid())  # the service's own pid: exec keeps it
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    with open(os.path.join(out_dir, "pid.tmp"), "w") as f:
        f.write("%d\n" % pid)
    os.rename(os.path.join(out_dir, "pid.tmp"), os.path.join(out_dir, "pid"))

    def drain(wait):
        while select.select([sock], [], [], wait)[0]:
            data = sock.recv(65536)
            at = time.monotonic() - start
            for assignment in data.decode("utf-8", "replace").split("\n"):
                if not assignment:
                    continue
                extra = ""
                if assignment == "READY=1":
                    with open(os.path.join(out_dir, "stdout"), "rb") as f:
                        extra = " lines=%d" % f.read().count(b"\n")
                log.write("%.3f %s%s\n" % (at, assignment, extra))
            wait = 0

    while True:
        drain(0.05)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            drain(0)
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
            log.write("exit %d\n" % code)
            return 0


if __name__ == "__main__":
    sys.exit(main())
