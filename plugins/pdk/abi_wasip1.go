//go:build wasip1

package pdk

import "unsafe"

// The gatehouse_v1 host functions. Pointers are offsets into this module's
// linear memory; lengths are bytes. See docs/plugins.md.

//go:wasmimport gatehouse_v1 input_read
//go:noescape
func hostInputRead(buf unsafe.Pointer, capacity uint32) int32

//go:wasmimport gatehouse_v1 output_write
//go:noescape
func hostOutputWrite(ptr unsafe.Pointer, n uint32) int32

//go:wasmimport gatehouse_v1 config_get
//go:noescape
func hostConfigGet(key unsafe.Pointer, keyLen uint32, buf unsafe.Pointer, capacity uint32) int32

//go:wasmimport gatehouse_v1 log
//go:noescape
func hostLog(level int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport gatehouse_v1 http_fetch
//go:noescape
func hostHTTPFetch(req unsafe.Pointer, n uint32) int32

//go:wasmimport gatehouse_v1 http_body_read
//go:noescape
func hostHTTPBodyRead(buf unsafe.Pointer, capacity uint32) int32

// abiMinor is the gatehouse_v1 minor version this PDK was written against.
const abiMinor = 0

//go:wasmexport gatehouse_abi_v1
func exportABI() int32 { return abiMinor }

//go:wasmexport hook_forms_submit
func exportFormsSubmit() int32 { return runFormSubmit() }

//go:wasmexport hook_records_read
func exportRecordsRead() int32 { return runRecordsRead() }

//go:wasmexport hook_email_send
func exportEmailSend() int32 { return runEmailSend() }

//go:wasmexport hook_captcha_verify
func exportCaptchaVerify() int32 { return runCaptchaVerify() }

var inBuf = make([]byte, 16<<10)

func ptr(b []byte) unsafe.Pointer {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// readInput pulls the hook's input, growing the reused buffer when the
// host reports a longer document than fits.
func readInput() []byte {
	for {
		n := hostInputRead(ptr(inBuf), uint32(cap(inBuf)))
		if n < 0 {
			return nil
		}
		if int(n) <= cap(inBuf) {
			return inBuf[:n]
		}
		inBuf = make([]byte, n)
	}
}

func writeOutput(b []byte) int32 {
	return hostOutputWrite(ptr(b), uint32(len(b)))
}

func configGet(key string) (string, bool) {
	kb := []byte(key)
	buf := make([]byte, 256)
	for {
		n := hostConfigGet(ptr(kb), uint32(len(kb)), ptr(buf), uint32(cap(buf)))
		if n < 0 {
			return "", false
		}
		if int(n) <= cap(buf) {
			return string(buf[:n]), true
		}
		buf = make([]byte, n)
	}
}

func logWrite(level int32, msg string) {
	b := []byte(msg)
	hostLog(level, ptr(b), uint32(len(b)))
}

func fetch(req []byte) (Response, error) {
	status := hostHTTPFetch(ptr(req), uint32(len(req)))
	if status < 0 {
		return Response{}, statusErr(status)
	}
	buf := make([]byte, 4096)
	for {
		n := hostHTTPBodyRead(ptr(buf), uint32(cap(buf)))
		if n < 0 {
			return Response{}, statusErr(n)
		}
		if int(n) <= cap(buf) {
			return Response{Status: int(status), Body: buf[:n]}, nil
		}
		buf = make([]byte, n)
	}
}
