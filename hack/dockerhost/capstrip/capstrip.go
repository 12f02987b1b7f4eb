// Package capstrip removes one capability from OCI runtime documents and
// finds those documents in a runc command line.
package capstrip

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Drop is the capability this host cannot grant.
const Drop = "CAP_SYS_RESOURCE"

// Invocation is the part of a runc command line that names documents.
type Invocation struct {
	Command string // create, run, exec, ...
	Bundle  string // --bundle / -b
	Process string // --process / -p (exec)
}

// globalWithValue are runc's global flags that take a separate value.
var globalWithValue = map[string]bool{
	"--root": true, "--log": true, "--log-format": true, "--criu": true,
}

// ParseArgs finds the subcommand and its --bundle and --process values.
func ParseArgs(args []string) Invocation {
	var inv Invocation
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			inv.Command = a
			i++
			break
		}
		if globalWithValue[a] {
			i++
		}
	}
	for ; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		var target *string
		switch name {
		case "--bundle", "-b":
			target = &inv.Bundle
		case "--process", "-p":
			target = &inv.Process
		default:
			continue
		}
		if hasValue {
			*target = value
		} else if i+1 < len(args) {
			i++
			*target = args[i]
		}
	}
	return inv
}

// StripFile removes capability from every capability list in the JSON file
// at path: under "process" for a bundle's config.json (inProcess), at the top
// level for an exec process document.
func StripFile(path, capability string, inProcess bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	out, changed, err := Strip(data, capability, inProcess)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !changed {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Strip returns doc without capability in its capability lists and whether
// anything was removed. Fields it does not know are kept as they were.
func Strip(doc []byte, capability string, inProcess bool) ([]byte, bool, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, false, fmt.Errorf("decoding: %w", err)
	}
	process := root
	if inProcess {
		raw, ok := root["process"]
		if !ok {
			return doc, false, nil
		}
		if err := json.Unmarshal(raw, &process); err != nil {
			return nil, false, fmt.Errorf("decoding process: %w", err)
		}
	}
	raw, ok := process["capabilities"]
	if !ok || string(raw) == "null" {
		return doc, false, nil
	}
	var caps map[string][]string
	if err := json.Unmarshal(raw, &caps); err != nil {
		return nil, false, fmt.Errorf("decoding capabilities: %w", err)
	}
	changed := false
	for set, list := range caps {
		kept := list[:0:0]
		for _, c := range list {
			if c == capability {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	if !changed {
		return doc, false, nil
	}
	var err error
	if process["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, false, err
	}
	if inProcess {
		if root["process"], err = json.Marshal(process); err != nil {
			return nil, false, err
		}
	}
	out, err := json.Marshal(root)
	return out, true, err
}
