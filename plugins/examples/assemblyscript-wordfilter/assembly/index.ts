// assemblyscript-wordfilter: a Gatehouse forms.submit plugin in AssemblyScript
// against the gatehouse_v1 ABI (docs/plugins.md). Build: npm ci && npm run build.
//
// It rejects a submission whose input mentions a word (config key "word",
// default "casino"), ignoring case. For brevity it searches the whole input
// document, field names included; a real filter would parse the JSON.
//
// Two settings in asconfig.json make the module acceptable to the host:
// "use": ["abort=assembly/index/onAbort"] replaces AssemblyScript's import of
// env.abort (the host refuses any import outside gatehouse_v1 and
// wasi_snapshot_preview1), and "exportStart": "_initialize" runs the
// top-level code below from an exported _initialize, the WASI reactor
// convention, instead of a start section.

// Host functions: @external names the import module and field.
@external("gatehouse_v1", "input_read")
declare function input_read(buf: usize, cap: i32): i32;
@external("gatehouse_v1", "output_write")
declare function output_write(ptr: usize, len: i32): i32;
@external("gatehouse_v1", "config_get")
declare function config_get(key: usize, keyLen: i32, buf: usize, cap: i32): i32;
@external("gatehouse_v1", "log")
declare function host_log(level: i32, ptr: usize, len: i32): void;

const LOG_INFO: i32 = 0;
const LOG_ERROR: i32 = 8;

// Strings are UTF-16 inside AssemblyScript; the ABI speaks UTF-8 bytes.
function logLine(level: i32, msg: string): void {
  const b = String.UTF8.encode(msg);
  host_log(level, changetype<usize>(b), b.byteLength);
}

function answer(doc: string): i32 {
  const b = String.UTF8.encode(doc);
  return output_write(changetype<usize>(b), b.byteLength) < 0 ? 1 : 0;
}

// pull reads a document the host hands over by length: it answers the
// length and copies only when the buffer is large enough.
function pull(read: (buf: usize, cap: i32) => i32, size: i32): string | null {
  let buf = new ArrayBuffer(size);
  let n = read(changetype<usize>(buf), buf.byteLength);
  if (n > buf.byteLength) {
    buf = new ArrayBuffer(n);
    n = read(changetype<usize>(buf), n);
  }
  if (n < 0) return null;
  return String.UTF8.decodeUnsafe(changetype<usize>(buf), <usize>n);
}

let configKey: ArrayBuffer = String.UTF8.encode("word");

function readWord(buf: usize, cap: i32): i32 {
  return config_get(changetype<usize>(configKey), configKey.byteLength, buf, cap);
}

function configuredWord(): string {
  const w = pull(readWord, 64);
  return w !== null ? w.toLowerCase() : "casino";
}

// Top-level code runs once per instance, from _initialize.
const word = configuredWord();

// The ABI marker: built for gatehouse_v1 minor version 0.
export function gatehouse_abi_v1(): i32 {
  return 0;
}

// forms.submit: 0 with an empty output allows, 0 with a reject document
// rejects, 1 fails the call (the output is then the log message).
export function hook_forms_submit(): i32 {
  const input = pull(input_read, 4096);
  if (input === null) {
    answer("input_read failed");
    return 1;
  }
  if (word.length > 0 && input.toLowerCase().includes(word)) {
    logLine(LOG_INFO, "rejected a submission mentioning " + word);
    return answer('{"action":"reject","code":"SPAM_DETECTED","message":"this message mentions a blocked word"}');
  }
  return 0;
}

// AssemblyScript calls abort on a failed assertion, an out-of-bounds access
// or a throw. The message goes to the plugin's log, then the call traps.
function onAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  logLine(LOG_ERROR, "abort: " + (message !== null ? message : "") + " at " +
    (fileName !== null ? fileName : "") + ":" + line.toString() + ":" + column.toString());
  unreachable();
}
