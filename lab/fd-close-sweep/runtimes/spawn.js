// spawn.js: starts /bin/true 3 times with child_process.spawnSync (libuv's uv_spawn: every fd
// libuv and Node open is O_CLOEXEC; the child only dup2()s its stdio).
// usage: node spawn.js
const cp = require('child_process');
for (let i = 0; i < 3; i++) cp.spawnSync('/bin/true');
