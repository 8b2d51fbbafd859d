;; grower: a hostile module that stays within the ABI and succeeds. Each
;; forms.submit call grows the memory one 64 KiB page at a time, writing to
;; every new page, until it holds 2048 pages (128 MiB), then allows the
;; submission. A refused grow traps. grower.wasm beside it is this file
;; built with `wat2wasm grower.wat` (Debian's wabt), 129 bytes.
(module
  (memory (export "memory") 1)
  (func (export "gatehouse_abi_v1") (result i32) (i32.const 0))
  (func (export "hook_forms_submit") (result i32)
    (block $done
      (loop $grow
        (br_if $done (i32.ge_u (memory.size) (i32.const 2048)))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then unreachable))
        (i32.store8 (i32.shl (i32.sub (memory.size) (i32.const 1)) (i32.const 16)) (i32.const 1))
        (br $grow)))
    (i32.const 0)))
