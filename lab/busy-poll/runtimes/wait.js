// wait.js: waits for a line on a FIFO (whose writer, run.sh, writes after 0.3 s).
//   spin: fs.openSync(O_RDONLY | O_NONBLOCK) and fs.readSync again on EAGAIN (a synchronous
//         polling loop)
//   wait: fs.createReadStream(fifo): the read waits (in libuv's thread pool) and the event
//         loop sleeps in epoll_wait
// usage: node wait.js MODE FIFO      (bounded: at most 10,000,000 tries)
'use strict';
const fs = require('fs');
const [mode, path] = process.argv.slice(2);
const buf = Buffer.alloc(512);
if (mode === 'spin') {
  const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  for (let i = 0; i < 10_000_000; i++) {
    try {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      console.log(`${n} bytes after ${i} tries`);
      break;
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
  fs.closeSync(fd);
} else if (mode === 'wait') {
  const s = fs.createReadStream(path);
  s.once('data', (d) => { console.log(`${d.length} bytes`); s.destroy(); });
} else {
  throw new Error('mode: spin | wait');
}
