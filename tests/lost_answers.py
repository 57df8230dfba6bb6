"""What the proxies that lose a store's answers share (tests/etcd_lost_answers.py,
tests/nats_lost_answers.py): ending a connection both ways, and the accept loop that
puts the proxy between each client and the server."""
import socket
import threading


def shut(*sockets):
    """Both directions of each socket ended: the threads that carry them end with them."""
    for s in sockets:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(server_port, port_file, carry):
    """Listens on a free port of 127.0.0.1, writes the port to port_file once it listens,
    and for each client connects to server_port on 127.0.0.1 and runs each of
    carry(client, server) (the functions that carry the connection's bytes, one a
    direction) on a thread of its own; serves until killed."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    with open(port_file, "w") as f:
        f.write(str(listener.getsockname()[1]))
    while True:
        client, _ = listener.accept()
        server = socket.create_connection(("127.0.0.1", server_port))
        for run in carry(client, server):
            threading.Thread(target=run, daemon=True).start()
