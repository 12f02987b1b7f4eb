package customscore

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apiconfig "kns3.dev/kns3/scheduler/apis/config"
	// The scheduler's codec decodes, defaults and converts the plugin's args
	// once this has registered them: every binary and test that builds the
	// plugin gets it.
	_ "kns3.dev/kns3/scheduler/apis/config/scheme"
	configv1 "kns3.dev/kns3/scheduler/apis/config/v1"
	"kns3.dev/kns3/scheduler/apis/config/validation"
)

// getArgs takes the args the framework passes to New: the internal
// CustomScorePluginArgs the scheduler's codec decoded and defaulted from the
// profile's pluginConfig, or nil, which means the defaults. It validates
// them, naming the offending field on error.
func getArgs(obj runtime.Object) (*apiconfig.CustomScorePluginArgs, error) {
	args, ok := obj.(*apiconfig.CustomScorePluginArgs)
	switch {
	case obj == nil || (ok && args == nil):
		var err error
		if args, err = defaultArgs(); err != nil {
			return nil, fmt.Errorf("defaulting %s args: %w", Name, err)
		}
	case !ok:
		return nil, fmt.Errorf("%s args: want *config.CustomScorePluginArgs, got %T", Name, obj)
	}
	if err := validation.ValidateCustomScorePluginArgs(field.NewPath("args"), args); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", Name, err)
	}
	return args, nil
}

// defaultArgs returns the internal args of an empty pluginConfig entry.
func defaultArgs() (*apiconfig.CustomScorePluginArgs, error) {
	in := &configv1.CustomScorePluginArgs{}
	configv1.SetObjectDefaults_CustomScorePluginArgs(in)
	out := &apiconfig.CustomScorePluginArgs{}
	if err := configv1.Convert_v1_CustomScorePluginArgs_To_config_CustomScorePluginArgs(in, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}
