// records.js: appends N records of ~33 bytes to a log file and makes them durable.
//   each:  fs.fdatasyncSync(fd) after every record
//   batch: one fs.fdatasyncSync(fd) after all records
// usage: node records.js MODE N FILE
'use strict';
const fs = require('fs');
const [mode, nArg, path] = process.argv.slice(2);
const n = Math.min(Number(nArg), 5000);
if (mode !== 'each' && mode !== 'batch') throw new Error('mode: each | batch');
const fd = fs.openSync(path, 'a');
for (let i = 0; i < n; i++) {
  fs.writeSync(fd, `record ${i}: account=${i % 97} amount=${i * 3}\n`);
  if (mode === 'each') fs.fdatasyncSync(fd);
}
fs.fdatasyncSync(fd);
fs.closeSync(fd);
