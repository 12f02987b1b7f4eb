package scenario

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// Watch loads the scenario file and hands it to onLoad, failing when it is
// missing or malformed. It then polls the file every interval until ctx ends
// and hands each new valid version to onLoad. Polling the content, rather
// than watching inotify events, follows the symlink swap by which the kubelet
// updates a mounted ConfigMap. A malformed later version is logged with its
// file and field and skipped, so the last good scenario keeps being served.
func Watch(ctx context.Context, path string, interval time.Duration, onLoad func(*Scenario)) error {
	logger := klog.FromContext(ctx)
	last, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading scenario: %w", err)
	}
	s, err := Parse(path, last)
	if err != nil {
		return err
	}
	logger.Info("Scenario loaded", "path", path, "nodes", len(s.Nodes), "source", s.Source, "fault", s.Fault.String())
	onLoad(s)

	var lastErr string
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		data, err := os.ReadFile(path)
		if err == nil && bytes.Equal(data, last) {
			return
		}
		var s *Scenario
		if err == nil {
			s, err = Parse(path, data)
		}
		if err != nil {
			if err.Error() != lastErr {
				logger.Error(err, "Scenario rejected; still serving the last good scenario", "path", path)
				lastErr = err.Error()
			}
			return
		}
		last, lastErr = data, ""
		logger.Info("Scenario reloaded", "path", path, "nodes", len(s.Nodes), "source", s.Source, "fault", s.Fault.String())
		onLoad(s)
	}, interval)
	return nil
}
