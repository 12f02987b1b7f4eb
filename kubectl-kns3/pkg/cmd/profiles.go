package cmd

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"kns3.dev/kns3/scheduler/plugins/customfilter"
	"kns3.dev/kns3/scheduler/plugins/customscore"
)

// profile is what explain needs of one of the scheduler's KNS-3 profiles.
type profile struct {
	// absolute: CustomScorePlugin's normalization is Absolute.
	absolute bool
}

// defaultProfiles stands in for the scheduler's /configz when it cannot be
// read: the shipped profile with its default args.
var defaultProfiles = map[string]profile{"kns-3-scheduler": {}}

// configz is the part of kube-scheduler's /configz (its versioned
// KubeSchedulerConfiguration) that says which profiles run KNS-3's plugins.
type configz struct {
	ComponentConfig struct {
		Profiles []struct {
			SchedulerName string `json:"schedulerName"`
			Plugins       map[string]struct {
				Enabled []struct {
					Name string `json:"name"`
				} `json:"enabled"`
			} `json:"plugins"`
			PluginConfig []struct {
				Name string `json:"name"`
				Args struct {
					Normalization string `json:"normalization"`
				} `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	} `json:"componentconfig"`
}

// parseProfiles returns the profiles of a /configz answer that enable
// CustomFilterPlugin or CustomScorePlugin, by scheduler name.
func parseProfiles(body []byte) (map[string]profile, error) {
	var cz configz
	if err := json.Unmarshal(body, &cz); err != nil {
		return nil, fmt.Errorf("decoding /configz: %w", err)
	}
	out := map[string]profile{}
	for _, p := range cz.ComponentConfig.Profiles {
		kns3 := false
		for _, set := range p.Plugins {
			for _, e := range set.Enabled {
				kns3 = kns3 || e.Name == customfilter.Name || e.Name == customscore.Name
			}
		}
		if !kns3 {
			continue
		}
		var pr profile
		for _, pc := range p.PluginConfig {
			if pc.Name == customscore.Name {
				pr.absolute = pc.Args.Normalization == "Absolute"
			}
		}
		out[p.SchedulerName] = pr
	}
	if len(cz.ComponentConfig.Profiles) == 0 {
		return nil, fmt.Errorf("/configz has no profiles")
	}
	return out, nil
}

func names(profiles map[string]profile) []string {
	out := make([]string, 0, len(profiles))
	for n := range profiles {
		out = append(out, n)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
