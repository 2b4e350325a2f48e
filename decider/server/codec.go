package server

import (
	// The decider's gRPC messages are marshalled with the generated
	// vtprotobuf methods instead of protobuf reflection: internal/wirecodec
	// replaces gRPC's "proto" codec when imported (health and reflection
	// messages still go through the standard one). Imported here so that
	// every process serving the decider, the in-process engine of the offline
	// doors included, uses it.
	_ "github.com/dynamic-config-admission/dynamic-config/internal/wirecodec"
)
