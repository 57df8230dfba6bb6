#!/usr/bin/env python3
"""An HTTP proxy in front of an etcd member's client port that loses the answer to
chosen requests: it passes every request on to etcd, and every answer back, except the
answer to a request whose body holds MARKER (a key's base64, say), which etcd gets and
carries out but whose answer never reaches the client: the connection it came on stays
open and silent until the client gives up (what a member that applied a write and then
went away looks like to the writer).

Usage: etcd_lost_answers.py ETCD_PORT PORT_FILE MARKER. It listens on a free port of
127.0.0.1, writes the port to PORT_FILE once it listens, and serves until killed.
Requests are HTTP/1.1 with a Content-Length (what libcurl sends), one at a time on a
connection: an answer comes before the next request on it."""
import sys

from lost_answers import serve, shut


class Link:
    def __init__(self, client, server):
        self.client = client
        self.server = server
        self.lost = False  # answers from here on are dropped


def server_to_client(link):
    try:
        while True:
            data = link.server.recv(65536)
            if not data:
                break
            if not link.lost:
                link.client.sendall(data)
    except OSError:
        pass
    if not link.lost:
        shut(link.client, link.server)


def client_to_server(link, marker):
    buf = b""
    try:
        while True:
            data = link.client.recv(65536)
            if not data:
                break
            buf += data
            while True:
                head_end = buf.find(b"\r\n\r\n")
                if head_end < 0:
                    break
                length = 0
                for line in buf[:head_end].split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                end = head_end + 4 + length
                if len(buf) < end:
                    break  # the body is still coming
                request, buf = buf[:end], buf[end:]
                if marker in request:
                    link.lost = True
                link.server.sendall(request)
    except OSError:
        pass
    shut(link.client, link.server)


def main():
    marker = sys.argv[3].encode()

    def carry(client, server):
        link = Link(client, server)
        return (lambda: server_to_client(link), lambda: client_to_server(link, marker))

    serve(int(sys.argv[1]), sys.argv[2], carry)


if __name__ == "__main__":
    main()
