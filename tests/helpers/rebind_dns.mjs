// rebind_dns.mjs — a DNS server for the rebinding test of tests/suites/62-fetch.
// `node rebind_dns.mjs ADDR FIRST THEN` listens on ADDR:53/udp and answers every A
// query with FIRST the first time and THEN ever after (TTL 0), AAAA with no
// records: a name that passes the check and then points somewhere else.
// Queries with no A/AAAA question get NOTIMP. Prints "ready" once bound.
import dgram from 'node:dgram';

const [addr = '127.0.0.1', first = '8.8.8.8', then = '127.0.0.1'] = process.argv.slice(2);
let aQueries = 0;

function answer(msg) {
  // header (12) + one question: QNAME labels, QTYPE, QCLASS
  let off = 12;
  while (off < msg.length && msg[off] !== 0) off += msg[off] + 1;
  const qend = off + 5;
  if (qend > msg.length) return null;
  const qtype = msg.readUInt16BE(off + 1);
  const head = Buffer.alloc(12);
  msg.copy(head, 0, 0, 2); // ID
  const question = msg.subarray(12, qend);
  if (qtype !== 1) {
    head.writeUInt16BE(qtype === 28 ? 0x8180 : 0x8184, 2); // NOERROR, or NOTIMP
    head.writeUInt16BE(1, 4);
    return Buffer.concat([head, question]);
  }
  const ip = aQueries++ === 0 ? first : then;
  head.writeUInt16BE(0x8180, 2);
  head.writeUInt16BE(1, 4); // QDCOUNT
  head.writeUInt16BE(1, 6); // ANCOUNT
  const rr = Buffer.alloc(16);
  rr.writeUInt16BE(0xc00c, 0); // name: pointer to the question
  rr.writeUInt16BE(1, 2); // A
  rr.writeUInt16BE(1, 4); // IN
  rr.writeUInt32BE(0, 6); // TTL 0
  rr.writeUInt16BE(4, 10);
  ip.split('.').forEach((b, i) => rr.writeUInt8(Number(b), 12 + i));
  return Buffer.concat([head, question, rr]);
}

const sock = dgram.createSocket('udp4');
sock.on('message', (msg, rinfo) => {
  const out = answer(msg);
  if (out) sock.send(out, rinfo.port, rinfo.address);
});
sock.bind(53, addr, () => process.stdout.write('ready\n'));
