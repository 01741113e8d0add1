package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// localVersion is the version Go gives a replaced module that has none;
// the label of a local tree that is not a git checkout.
const localVersion = "v0.0.0-00010101000000-000000000000"

// treeVersion is the module version a local tree is built as (OPS-10): the
// tag at HEAD, else the pseudo-version of HEAD's commit (as the go command
// would give that commit fetched from the repository), else localVersion
// when dir is not a git checkout or git is missing. It is what `caddy
// list-modules --versions` and `caddy version` show. Uncommitted changes
// are not marked: a module version cannot say so.
func treeVersion(ctx context.Context, dir string) string {
	git := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err
	}
	head, err := git("log", "-1", "--format=%H %ct")
	if err != nil {
		return localVersion
	}
	exact, _ := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD")
	older, _ := git("describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", "HEAD")
	v, err := pseudoVersion(head, exact, older)
	if err != nil {
		return localVersion
	}
	return v
}

// pseudoVersion turns `git log --format='%H %ct'` of HEAD and the tags
// found at and before HEAD into the module version of that commit.
func pseudoVersion(head, exact, older string) (string, error) {
	if semver.IsValid(exact) && semver.Canonical(exact) == exact {
		return exact, nil
	}
	hash, secs, ok := strings.Cut(head, " ")
	if !ok || len(hash) < 12 {
		return "", fmt.Errorf("unexpected git log output %q", head)
	}
	unix, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return "", err
	}
	major := "v0"
	if !semver.IsValid(older) || semver.Canonical(older) != older || semver.Major(older) != "v0" && semver.Major(older) != "v1" {
		older = "" // the module path has no /vN suffix: only v0 and v1 tags count
	} else {
		major = semver.Major(older)
	}
	return module.PseudoVersion(major, older, time.Unix(unix, 0), hash[:12]), nil
}
