#!/usr/bin/env python3
"""A proxy in front of a nats-server that loses every key/value write: it passes the
client's protocol through, except each publish to a $KV. subject, which it drops, so
the write never lands and its answer never comes (what a server stopped or cut off
mid-write looks like to the writer). Reads, watches and API requests pass.

Usage: nats_lost_answers.py NATS_PORT PORT_FILE [DELAY_MS]. It listens on a free port
of 127.0.0.1, writes the port to PORT_FILE once it listens, and serves until killed.
With DELAY_MS each key/value write is passed on after that long instead of dropped:
another writer has the time to move the key between a read and its write."""
import time
import socket
import sys
import threading


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


def shut(*sockets):
    """Both directions of each socket ended: the proxy's two pumps end with them."""
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


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
    nats_port = int(sys.argv[1])
    if len(sys.argv) > 3:
        DELAY_MS = int(sys.argv[3])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(sys.argv[2], "w") as f:
        f.write(str(listener.getsockname()[1]))
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", nats_port))
        threading.Thread(target=pump, args=(server, client), daemon=True).start()
        threading.Thread(target=client_to_server, args=(client, server), daemon=True).start()


if __name__ == "__main__":
    main()
