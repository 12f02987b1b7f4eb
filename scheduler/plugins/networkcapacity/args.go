package networkcapacity

import (
	"fmt"

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
// NetworkCapacityArgs the scheduler's codec decoded and defaulted, or nil,
// which means the defaults. It validates them, naming the field on error.
func getArgs(obj runtime.Object) (*apiconfig.NetworkCapacityArgs, error) {
	args, ok := obj.(*apiconfig.NetworkCapacityArgs)
	switch {
	case obj == nil || (ok && args == nil):
		in := &configv1.NetworkCapacityArgs{}
		configv1.SetObjectDefaults_NetworkCapacityArgs(in)
		args = &apiconfig.NetworkCapacityArgs{}
		if err := configv1.Convert_v1_NetworkCapacityArgs_To_config_NetworkCapacityArgs(in, args, nil); err != nil {
			return nil, fmt.Errorf("defaulting %s args: %w", Name, err)
		}
	case !ok:
		return nil, fmt.Errorf("%s args: want *config.NetworkCapacityArgs, got %T", Name, obj)
	}
	if err := validation.ValidateNetworkCapacityArgs(field.NewPath("args"), args); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}
