package networkpeers

import (
	"fmt"
	"net/url"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	// The scheduler's codec decodes, defaults and converts the plugin's args
	// once this has registered them.
	_ "kns3.dev/kns3/scheduler/apis/config/scheme"
	configv1 "kns3.dev/kns3/scheduler/apis/config/v1"
	"kns3.dev/kns3/scheduler/apis/config/validation"
)

// getArgs takes the args the framework passes to New: the internal
// NetworkPeersArgs the scheduler's codec decoded and defaulted, or nil,
// which means the defaults. It validates them, naming the field on error.
func getArgs(obj runtime.Object) (*apiconfig.NetworkPeersArgs, error) {
	args, ok := obj.(*apiconfig.NetworkPeersArgs)
	switch {
	case obj == nil || (ok && args == nil):
		in := &configv1.NetworkPeersArgs{}
		configv1.SetObjectDefaults_NetworkPeersArgs(in)
		args = &apiconfig.NetworkPeersArgs{}
		if err := configv1.Convert_v1_NetworkPeersArgs_To_config_NetworkPeersArgs(in, args, nil); err != nil {
			return nil, fmt.Errorf("defaulting %s args: %w", Name, err)
		}
	case !ok:
		return nil, fmt.Errorf("%s args: want *config.NetworkPeersArgs, got %T", Name, obj)
	}
	if err := validation.ValidateNetworkPeersArgs(field.NewPath("args"), args); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}

// redacted is rawURL without its password, for logs.
func redacted(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}
