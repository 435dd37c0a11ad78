// Preloaded with `node --require` by the interop tests: a server that listens
// on a bare port (server-everything calls app.listen(PORT)) binds 127.0.0.1
// instead of every interface, and the port it got is printed on stderr as
// "TOOLWIRE_LISTENING 127.0.0.1:<port>".
const net = require('node:net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const p = args[0];
  if (typeof p === 'number' || (typeof p === 'string' && /^\d+$/.test(p))) {
    const callbacks = args.slice(1).filter((a) => typeof a === 'function');
    this.once('listening', () => {
      const a = this.address();
      process.stderr.write(`TOOLWIRE_LISTENING ${a.address}:${a.port}\n`);
    });
    return listen.call(this, Number(p), '127.0.0.1', ...callbacks);
  }
  return listen.apply(this, args);
};
