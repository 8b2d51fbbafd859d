//go:build !linux

package codec

// mapMemory maps nothing here: mappedMemory grows a Go slice instead.
func mapMemory(uint64) ([]byte, func()) { return nil, nil }
