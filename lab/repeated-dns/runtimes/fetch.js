// fetch.js: N sequential GET requests to http://NAME:PORT/feed/i with Node's http module.
//   fresh:     agent: false, a new connection per request; each connection calls dns.lookup
//              (getaddrinfo in libuv's thread pool), which has no cache: a lookup per request
//   keepalive: one http.Agent({ keepAlive: true }) for all requests: one connection, one lookup
//              (Node >= 19's global agent keeps connections alive too)
//   cached:    agent: false (a connection per request) with a `lookup` function that keeps
//              dns.lookup's answer (the `lookup` option of http.request/net.connect): one lookup
// usage: node fetch.js MODE N NAME PORT
'use strict';
const http = require('http');
const [mode, nArg, name, port] = process.argv.slice(2);
const n = Math.min(Number(nArg), 200);
const dns = require('dns');
let agent;
let lookup;
if (mode === 'fresh') agent = false;
else if (mode === 'cached') {
  agent = false;
  const cache = new Map();
  lookup = (host, opts, cb) => {
    const key = `${host}/${opts.family || 0}/${opts.all ? 1 : 0}`;
    const hit = cache.get(key);
    if (hit) return process.nextTick(() => cb(null, ...hit));
    dns.lookup(host, opts, (err, ...res) => {
      if (!err) cache.set(key, res);
      cb(err, ...res);
    });
  };
}
else if (mode === 'keepalive') agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
else throw new Error('mode: fresh | keepalive | cached');

function get(i) {
  if (i >= n) {
    if (agent) agent.destroy();
    return;
  }
  http.get({ host: name, port: Number(port), path: `/feed/${i}`, agent, lookup }, (res) => {
    res.resume();
    res.on('end', () => get(i + 1));
  }).on('error', (e) => { throw e; });
}
get(0);
