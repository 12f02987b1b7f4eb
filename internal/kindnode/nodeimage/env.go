package nodeimage

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
)

func homeDir() (string, error) {
	u, err := user.Current()
	if err != nil || u.HomeDir == "" {
		if home := os.Getenv("HOME"); home != "" {
			return home, nil
		}
		return "", fmt.Errorf("cannot find the home directory: %v", err)
	}
	return u.HomeDir, nil
}

// goTool finds the go command: on PATH, else in the usual install places.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/local/go/bin/go", "/usr/lib/go/bin/go"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("the go command is not on PATH nor in /usr/local/go/bin: install Go to build the node's programs")
}

// goEnv is the environment for the go command: the user's own (module cache,
// build cache, proxy settings), even when the caller runs with a scratch
// $HOME, as test runners do.
func goEnv(goBin string, extra ...string) ([]string, error) {
	home, err := homeDir()
	if err != nil {
		return nil, err
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "PATH=") {
			continue
		}
		env = append(env, kv)
	}
	path := filepath.Dir(goBin) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	env = append(env, "HOME="+home, "PATH="+path)
	return append(env, extra...), nil
}

// run runs a command, returning its combined output in the error.
func run(dir string, env []string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(out, 4000))
	}
	return nil
}

// output runs a command and returns its standard output.
func output(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail([]byte(stderr.String()), 4000))
	}
	return string(out), nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
