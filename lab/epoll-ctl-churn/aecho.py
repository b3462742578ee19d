"""aecho.py MODE REQUESTS: an asyncio echo server on 127.0.0.1 and, in the same event loop, a
client (asyncio streams) making REQUESTS round trips of 100 bytes, one at a time.

  sock     the server uses the loop's low-level socket calls, loop.sock_recv() and
           loop.sock_sendall(): each sock_recv that finds no data yet registers the socket
           (EPOLL_CTL_ADD) and unregisters it when it is readable (EPOLL_CTL_DEL), once per
           message (Lib/asyncio/selector_events.py, _sock_recv / add_reader / remove_reader)
  streams  the server uses asyncio streams (asyncio.start_server): the transport registers its
           socket for reading once and keeps it; writes go straight to send()
"""
import asyncio
import socket
import sys

MODE, N = sys.argv[1], int(sys.argv[2])


async def streams_server(reader, writer):
    while data := await reader.read(4096):
        writer.write(data)
        await writer.drain()
    writer.close()


async def sock_server(loop, conn):
    while data := await loop.sock_recv(conn, 4096):
        await loop.sock_sendall(conn, data)
    conn.close()


async def main():
    loop = asyncio.get_running_loop()
    if MODE == "streams":
        srv = await asyncio.start_server(streams_server, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
    elif MODE == "sock":
        ls = socket.socket()
        ls.bind(("127.0.0.1", 0))
        ls.listen()
        ls.setblocking(False)
        port = ls.getsockname()[1]

        async def accept_one():
            conn, _ = await loop.sock_accept(ls)
            conn.setblocking(False)
            await sock_server(loop, conn)

        server = asyncio.create_task(accept_one())
    else:
        sys.exit(f"unknown mode {MODE}")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(N):
        writer.write(b"x" * 100)
        await writer.drain()
        await reader.readexactly(100)
    writer.close()
    await writer.wait_closed()
    if MODE == "sock":
        await server


asyncio.run(main())
