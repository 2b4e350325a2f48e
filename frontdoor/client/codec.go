package client

import (
	// The front door's calls to the decider are marshalled with the generated
	// vtprotobuf methods instead of protobuf reflection: internal/wirecodec
	// replaces gRPC's "proto" codec when imported (health checks still go
	// through the standard one). Imported here, where the front door dials
	// the decider, so that every process that talks to a decider uses it.
	_ "github.com/dynamic-config-admission/dynamic-config/internal/wirecodec"
)
