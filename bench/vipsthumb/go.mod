module github.com/gatehouse-dev/gatehouse/bench/vipsthumb

go 1.26

require github.com/davidbyttow/govips/v2 v2.16.0

require (
	golang.org/x/image v0.18.0 // indirect
	golang.org/x/net v0.25.0 // indirect
	golang.org/x/text v0.16.0 // indirect
)
