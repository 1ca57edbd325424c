// readbuf.mjs — the SDK's stdio ReadBuffer, minus its quadratic copy
// (imported by lib.mjs, so every stdio client of the tests has it).
//
// ReadBuffer.append (sdk shared/stdio.js) concatenates its whole buffer
// with every chunk read from the server's stdout (64 KiB a read). A reply
// of some MB (session_bash output of 1 MiB, NULs escaped as \u0000) then
// costs dozens of MB of copies into freshly faulted buffers: seconds of
// CPU for one call (soak.mjs's warm-up). Here a chunk holding no newline
// is only kept (readMessage could find no line in it), and the kept parts
// are joined once the chunk ending their line comes, in one copy: the same
// bytes, the same messages, the same size limit on the same running total.
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';

const sdkClear = ReadBuffer.prototype.clear;

ReadBuffer.prototype.append = function append(chunk) {
  const held = this._held || [];
  const heldLen = this._heldLen || 0;
  const newSize = (this._buffer?.length ?? 0) + heldLen + chunk.length;
  if (newSize > this._maxBufferSize) { // as the SDK's append
    this.clear();
    throw new Error(`ReadBuffer exceeded maximum size of ${this._maxBufferSize} bytes`);
  }
  held.push(chunk);
  if (chunk.indexOf(10) === -1) { // no line ends here: nothing to join yet
    this._held = held;
    this._heldLen = heldLen + chunk.length;
    return;
  }
  this._held = [];
  this._heldLen = 0;
  // one copy: what was buffered and the parts held, joined (a lone chunk is kept as it is)
  if (this._buffer) this._buffer = Buffer.concat([this._buffer, ...held]);
  else this._buffer = held.length > 1 ? Buffer.concat(held) : chunk;
};

ReadBuffer.prototype.clear = function clear() {
  this._held = [];
  this._heldLen = 0;
  sdkClear.call(this);
};
