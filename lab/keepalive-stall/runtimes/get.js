// get.js: downloads http://127.0.0.1:PORT/body.bin once.
//   raw:  net.connect, an HTTP/1.1 keep-alive request written by hand, done on the socket's
//         'end' event: that comes only when the server closes (its keep-alive timeout)
//   http: http.get: the response ends at Content-Length
// usage: node get.js MODE PORT
'use strict';
const net = require('net');
const http = require('http');
const [mode, port] = process.argv.slice(2);
if (mode === 'raw') {
  let n = 0;
  const s = net.connect(Number(port), '127.0.0.1', () => {
    s.write('GET /body.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
  });
  s.on('data', (d) => { n += d.length; });
  s.on('end', () => console.log(n));
} else if (mode === 'http') {
  http.get({ host: '127.0.0.1', port: Number(port), path: '/body.bin', agent: false }, (res) => {
    let n = 0;
    res.on('data', (d) => { n += d.length; });
    res.on('end', () => console.log(n));
  });
} else {
  throw new Error('mode: raw | http');
}
