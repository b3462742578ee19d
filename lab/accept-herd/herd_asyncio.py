#!/usr/bin/env python3
"""accept-herd lab: a pre-fork server built on Python's asyncio (stdlib event loop, epoll).

usage: herd_asyncio.py MODE WORKERS PORTFILE
  shared     BAD   the parent opens one listening socket and forks WORKERS processes; each runs
                   an asyncio loop with loop.create_server(sock=shared_socket). asyncio registers
                   the socket with epoll without EPOLLEXCLUSIVE and accepts until BlockingIOError,
                   so every connection wakes every worker and all but one get EAGAIN
  reuseport  GOOD  each worker opens its own listening socket with
                   loop.create_server(host, port, reuse_port=True) (SO_REUSEPORT): the kernel
                   hands each connection to one worker
The port is written to PORTFILE once every worker listens; SIGTERM to the parent stops all;
every process exits after 30 s whatever happens (a lab server).
"""
import asyncio
import os
import signal
import socket
import sys

mode, workers, portfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]


async def handle(reader, writer):
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.0 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
    await writer.drain()
    writer.close()


async def serve(ready_fd, sock, port):
    loop = asyncio.get_running_loop()
    stop = loop.create_future()
    loop.add_signal_handler(signal.SIGTERM, stop.set_result, None)
    loop.call_later(30, lambda: stop.done() or stop.set_result(None))
    if sock is not None:
        server = await loop.create_server(lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(), handle), sock=sock)
    else:
        server = await asyncio.start_server(handle, "127.0.0.1", port, reuse_port=True)
    os.write(ready_fd, b"r")
    async with server:
        await stop


def main():
    signal.alarm(30)
    if mode == "shared":
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        port = sock.getsockname()[1]
    elif mode == "reuseport":
        # reserve a port: bound with SO_REUSEPORT, never listening
        reserve = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        reserve.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        reserve.bind(("127.0.0.1", 0))
        port = reserve.getsockname()[1]
        sock = None
    else:
        sys.exit("usage: herd_asyncio.py shared|reuseport WORKERS PORTFILE")
    r, w = os.pipe()
    pids = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            asyncio.run(serve(w, sock, port))
            os._exit(0)
        pids.append(pid)
    for _ in range(workers):
        os.read(r, 1)
    with open(portfile + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(portfile + ".tmp", portfile)
    signal.sigwait([signal.SIGTERM])
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    for pid in pids:
        os.waitpid(pid, 0)


main()
