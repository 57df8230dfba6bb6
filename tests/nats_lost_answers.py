#!/usr/bin/env python3
"""A proxy in front of a nats-server that loses every key/value write: it passes the
client's protocol through, except each publish to a $KV. subject, which it drops, so
the write never lands and its answer never comes (what a server stopped or cut off
mid-write looks like to the writer). Reads, watches and API requests pass.

Usage: nats_lost_answers.py NATS_PORT PORT_FILE [DELAY_MS]. It listens on a free port
of 127.0.0.1, writes the port to PORT_FILE once it listens, and serves until killed.
With DELAY_MS each key/value write is passed on after that long instead of dropped:
another writer has the time to move the key between a read and its write."""
import sys
import time

from lost_answers import serve, shut


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    shut(src, dst)


def client_to_server(client, server):
    """Forward the client's protocol, one operation at a time, without KV publishes."""
    buf = b""
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            buf += data
            out = b""
            while True:
                end = buf.find(b"\r\n")
                if end < 0:
                    break
                line = buf[: end + 2]
                words = line.split()
                op = words[0].upper() if words else b""
                if op in (b"PUB", b"HPUB"):
                    size = int(words[-1])
                    if len(buf) < len(line) + size + 2:
                        break  # the payload is still coming
                    whole = buf[: len(line) + size + 2]
                    buf = buf[len(whole):]
                    if not words[1].startswith(b"$KV."):
                        out += whole
                    elif DELAY_MS is not None:
                        if out:
                            server.sendall(out)
                            out = b""
                        time.sleep(DELAY_MS / 1000)
                        out += whole
                    continue
                out += line
                buf = buf[len(line):]
            if out:
                server.sendall(out)
    except OSError:
        pass
    shut(client, server)


DELAY_MS = None


def main():
    global DELAY_MS
    if len(sys.argv) > 3:
        DELAY_MS = int(sys.argv[3])
    serve(int(sys.argv[1]), sys.argv[2],
          lambda client, server: (lambda: pump(server, client), lambda: client_to_server(client, server)))


if __name__ == "__main__":
    main()
