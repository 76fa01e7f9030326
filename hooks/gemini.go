package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/memdir/memdir/internal/jsonobj"
)

// GeminiHookName is the name memdir's handlers have in Gemini CLI's
// settings; hooksConfig.disabled lists the names of hooks to skip.
const GeminiHookName = "memdir"

// Gemini CLI (0.61.0) keeps hooks in settings.json (~/.gemini/ or the
// project's .gemini/) under "hooks", shaped as Claude Code's with named
// handlers and timeouts in milliseconds, and runs them when
// hooksConfig.enabled is true (its default). Gemini rewrites the file
// itself only to migrate deprecated keys, pretty-printed with two spaces,
// as [Install] writes it.

// GeminiChanges says what InstallGemini did besides the handlers.
type GeminiChanges struct {
	*Changes
	// EnabledAdded is true when it set hooksConfig.enabled, which the
	// file did not set.
	EnabledAdded bool
	// Warnings are what the user must still do.
	Warnings []string
}

// InstallGemini returns Gemini settings data with memdir's handlers set
// to entries (see [Install]), and hooksConfig.enabled set to true when the
// file does not set it. hooksConfig.enabled false, or memdir's name in
// hooksConfig.disabled, are left as they are and reported: they are the
// user's choice.
func InstallGemini(data []byte, entries []Entry) ([]byte, *GeminiChanges, error) {
	out, ch, err := Install(data, entries)
	if err != nil {
		return nil, nil, err
	}
	gc := &GeminiChanges{Changes: ch}
	root, err := jsonobj.Parse(out)
	if err != nil {
		return nil, nil, err
	}
	cfg, at, err := root.Get("hooksConfig")
	if err != nil {
		return nil, nil, err
	}
	var hc jsonobj.Object
	if at >= 0 {
		if hc, err = jsonobj.Parse(cfg); err != nil {
			return nil, nil, fmt.Errorf("key hooksConfig: %w", err)
		}
	}
	enabled, eat, err := hc.Get("enabled")
	if err != nil {
		return nil, nil, fmt.Errorf("key hooksConfig: %w", err)
	}
	switch {
	case eat < 0:
		hc = hc.Set("enabled", jsonobj.Value(true))
		gc.EnabledAdded = true
		if at >= 0 {
			root[at].Value = hc.Marshal()
		} else {
			root = append(root, jsonobj.Member{Key: "hooksConfig", Value: hc.Marshal()})
		}
		out = root.Render()
	case string(jsonobj.Compact(enabled)) != "true":
		gc.Warnings = append(gc.Warnings, "hooksConfig.enabled is "+string(jsonobj.Compact(enabled))+", so Gemini CLI runs no hooks: set it to true")
	}
	var disabled []string
	if raw, _, _ := hc.Get("disabled"); raw != nil && json.Unmarshal(raw, &disabled) == nil && slices.Contains(disabled, GeminiHookName) {
		gc.Warnings = append(gc.Warnings, fmt.Sprintf("hooksConfig.disabled lists %q, so Gemini CLI skips memdir's hooks: remove it from the list", GeminiHookName))
	}
	return out, gc, nil
}

// GeminiStatus is what settings.json says about memdir's hooks.
type GeminiStatus struct {
	// Enabled is hooksConfig.enabled, nil when unset (Gemini CLI 0.61.0
	// runs hooks then).
	Enabled *bool
	// Disabled is true when hooksConfig.disabled names memdir's hooks.
	Disabled bool
}

// ReadGemini reads Gemini settings data for the status of memdir's hooks.
func ReadGemini(data []byte) (*GeminiStatus, error) {
	if _, err := jsonobj.Parse(data); err != nil {
		return nil, err
	}
	var s struct {
		HooksConfig struct {
			Enabled  *bool    `json:"enabled"`
			Disabled []string `json:"disabled"`
		} `json:"hooksConfig"`
	}
	if data = bytes.TrimPrefix(bytes.TrimSpace(data), []byte("\xef\xbb\xbf")); len(data) > 0 {
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("key hooksConfig: %v", err)
		}
	}
	return &GeminiStatus{Enabled: s.HooksConfig.Enabled, Disabled: slices.Contains(s.HooksConfig.Disabled, GeminiHookName)}, nil
}
