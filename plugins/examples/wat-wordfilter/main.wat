;; wat-wordfilter: a Gatehouse forms.submit plugin written by hand in the
;; WebAssembly text format against the gatehouse_v1 ABI (docs/plugins.md).
;; Build: wat2wasm main.wat -o wat-wordfilter.wasm   (Debian package wabt)
;;
;; It rejects a submission whose input document contains "casino" in any
;; case. It needs no WASI at all, no allocator and no _initialize: the
;; strings it answers with are data segments, the input goes to a fixed
;; buffer.
(module
  ;; Host functions: import module gatehouse_v1 (i32 offsets into "memory").
  (import "gatehouse_v1" "input_read" (func $input_read (param $buf i32) (param $cap i32) (result i32)))
  (import "gatehouse_v1" "output_write" (func $output_write (param $ptr i32) (param $len i32) (result i32)))
  (import "gatehouse_v1" "log" (func $log (param $level i32) (param $ptr i32) (param $len i32)))

  ;; One 64 KiB page: constants below 1024, the input buffer from 1024.
  (memory (export "memory") 1)
  (data (i32.const 0) "casino")
  (data (i32.const 16) "{\"action\":\"reject\",\"code\":\"SPAM_DETECTED\",\"message\":\"no casino offers, please\"}")
  (data (i32.const 128) "rejected a submission mentioning casino")
  (data (i32.const 192) "input larger than 63 KiB")

  ;; The ABI marker: built for gatehouse_v1 minor version 0.
  (func (export "gatehouse_abi_v1") (result i32)
    (i32.const 0))

  ;; forms.submit: 0 with an empty output allows, 0 with a reject document
  ;; rejects, 1 fails the call (the output is then the log message).
  (func (export "hook_forms_submit") (result i32)
    (local $n i32) (local $i i32) (local $j i32)
    ;; Pull the input into [1024, 65536). The answer is the input's length:
    ;; more than the capacity means nothing was copied (a negative status
    ;; is a huge unsigned number and lands here too).
    (local.set $n (call $input_read (i32.const 1024) (i32.const 64512)))
    (if (i32.gt_u (local.get $n) (i32.const 64512))
      (then
        (drop (call $output_write (i32.const 192) (i32.const 24)))
        (return (i32.const 1))))
    ;; Look for the 6 bytes at offset 0, ASCII case folded with | 0x20.
    (block $not_found
      (loop $scan
        (br_if $not_found (i32.gt_u (i32.add (local.get $i) (i32.const 6)) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $compare
            (br_if $mismatch
              (i32.ne
                (i32.or (i32.load8_u offset=1024 (i32.add (local.get $i) (local.get $j))) (i32.const 0x20))
                (i32.load8_u (local.get $j))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br_if $compare (i32.lt_u (local.get $j) (i32.const 6))))
          ;; All six matched: log at info (0) and answer the reject.
          (call $log (i32.const 0) (i32.const 128) (i32.const 39))
          (drop (call $output_write (i32.const 16) (i32.const 79)))
          (return (i32.const 0)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i32.const 0))
)
