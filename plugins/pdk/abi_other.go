//go:build !wasip1

package pdk

// Outside GOOS=wasip1 there is no host: these stand-ins let the package
// build and be documented and tested on any platform. testInput and
// testOutput let the package's own tests drive the hook functions.

var (
	testInput  []byte
	testOutput []byte
	testConfig map[string]string
)

func readInput() []byte { return testInput }

func writeOutput(b []byte) int32 {
	testOutput = append(testOutput[:0], b...)
	return 0
}

func configGet(key string) (string, bool) {
	v, ok := testConfig[key]
	return v, ok
}

func logWrite(int32, string) {}

func fetch([]byte) (Response, error) { return Response{}, ErrNoHost }
