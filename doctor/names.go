package doctor

import (
	"sort"
	"strings"

	"github.com/memdir/memdir"
)

// FindDuplicateName reports that several memories in one area (the private
// directory, or team/) carry the same frontmatter name, so saving that name is
// refused and a model recalling it sees two versions. Which one to keep is for a
// person to decide: Fix changes nothing.
const FindDuplicateName FindingKind = "duplicate-name"

// checkNames reports memories sharing a name. Files identical to each other
// are already reported as duplicate-content, so a pair of them is not
// reported again.
func checkNames(mems []memdir.Header, found []Finding, add func(Finding)) {
	identical := map[[2]string]bool{}
	for _, f := range found {
		if f.Kind == FindDuplicateMemory {
			for _, o := range f.Related {
				identical[[2]string{f.Path, o}] = true
			}
		}
	}
	type key struct {
		team bool
		name string
	}
	byName := map[key][]string{}
	for _, h := range mems {
		if h.Name == "" || isDailyLog(h.Path) {
			continue
		}
		k := key{strings.HasPrefix(h.Path, memdir.TeamDirName+"/"), h.Name}
		byName[k] = append(byName[k], h.Path)
	}
	for k, paths := range byName {
		if len(paths) < 2 {
			continue
		}
		sort.Strings(paths)
		for _, p := range paths {
			var others []string
			for _, o := range paths {
				if o != p && !identical[[2]string{p, o}] {
					others = append(others, o)
				}
			}
			if len(others) == 0 {
				continue
			}
			add(Finding{Kind: FindDuplicateName, Path: p, Related: others,
				Message: "the name " + quoteName(k.name) + " is also used by " + strings.Join(others, ", ") + "; merge them or give one another name"})
		}
	}
}

func quoteName(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
