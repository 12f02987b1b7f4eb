package api

import _ "embed"

// OpenAPIDocument is the OpenAPI 3 document served at /openapi.json. A test
// holds it to the Go types in types.go.
//
// It lives in a file of its own because Bazel's source scanner reads a rune
// literal such as '"' as the start of a string and then misses the directive.
//
//go:embed openapi.json
var OpenAPIDocument []byte
