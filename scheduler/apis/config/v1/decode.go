package v1

import (
	"encoding/json"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// UnmarshalJSON decodes the args as strictly as the scheduler decodes its own
// configuration: field names are case-sensitive and unknown or duplicate
// fields are errors, so a misspelt field fails start-up instead of being
// silently ignored. A value of the wrong form (a bad duration, say) is an
// error that names its field, which the decoder's own error does not.
func (a *CustomScorePluginArgs) UnmarshalJSON(data []byte) error {
	// args has the fields of CustomScorePluginArgs but not this method.
	type args CustomScorePluginArgs
	return decodeStrict(data, (*args)(a), func() any { return &args{} })
}

// UnmarshalJSON decodes NetworkCapacityArgs as strictly as
// CustomScorePluginArgs.
func (a *NetworkCapacityArgs) UnmarshalJSON(data []byte) error {
	type args NetworkCapacityArgs
	return decodeStrict(data, (*args)(a), func() any { return &args{} })
}

// UnmarshalJSON decodes NetworkPeersArgs as strictly as
// CustomScorePluginArgs.
func (a *NetworkPeersArgs) UnmarshalJSON(data []byte) error {
	type args NetworkPeersArgs
	return decodeStrict(data, (*args)(a), func() any { return &args{} })
}

// decodeStrict decodes data into into, strictly; on an error it decodes
// the fields one at a time into fresh values of blank, to name the field.
func decodeStrict(data []byte, into any, blank func() any) error {
	strictErrs, err := kjson.UnmarshalStrict(data, into)
	if err != nil {
		// Find the field by decoding the fields one at a time.
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) == nil {
			names := make([]string, 0, len(fields))
			for name := range fields {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				one, _ := json.Marshal(map[string]json.RawMessage{name: fields[name]})
				if _, fieldErr := kjson.UnmarshalStrict(one, blank()); fieldErr != nil {
					var value any = string(fields[name])
					_ = json.Unmarshal(fields[name], &value)
					return field.Invalid(field.NewPath("args", name), value, fieldErr.Error())
				}
			}
		}
		return err
	}
	if len(strictErrs) > 0 {
		return runtime.NewStrictDecodingError(strictErrs)
	}
	return nil
}
