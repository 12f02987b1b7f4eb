"""Repository rules that fetch everything the build needs offline: Go modules
through the Go module proxy, and Debian's Bazel rule packages."""

def _go_tool(ctx):
    go = ctx.which("go")
    if not go:
        fail("no `go` on PATH: install Go 1.26 (see README.md)")
    return go

def _go_module_impl(ctx):
    go = _go_tool(ctx)
    env = {"GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"}
    module = "%s@%s" % (ctx.attr.module, ctx.attr.version)
    ctx.report_progress("go mod download " + module)
    res = ctx.execute([go, "mod", "download", "-json", module], environment = env)
    if res.return_code:
        fail("go mod download %s: %s%s" % (module, res.stdout, res.stderr))
    info = json.decode(res.stdout)
    if "Error" in info:
        fail("go mod download %s: %s" % (module, info["Error"]))
    res = ctx.execute(["sh", "-c", 'cp -R "$1"/. . && chmod -R u+w .', "copy", info["Dir"]])
    if res.return_code:
        fail("copying %s: %s" % (module, res.stderr))
    for patch in ctx.attr.patches:
        ctx.patch(patch, 1)
    for cmd in ctx.attr.post_cmds:
        res = ctx.execute(["sh", "-c", cmd], environment = env)
        if res.return_code:
            fail("%s: `%s` failed: %s%s" % (ctx.name, cmd, res.stdout, res.stderr))

go_module = repository_rule(
    implementation = _go_module_impl,
    doc = "A Go module from the Go module proxy (`go mod download`), with our patches applied.",
    attrs = {
        "module": attr.string(mandatory = True),
        "version": attr.string(mandatory = True),
        "patches": attr.label_list(doc = "patch files, applied with -p1"),
        "post_cmds": attr.string_list(doc = "shell commands run in the repository after patching"),
    },
    environ = ["GOPROXY", "GOMODCACHE", "GOPATH", "HOME"],
)

def _debian_rules_impl(ctx):
    path = ctx.attr.path
    if not ctx.path(path + "/WORKSPACE").exists:
        fail("%s not found: apt-get install %s (see README.md)" % (path, ctx.attr.package))
    res = ctx.execute(["sh", "-c", 'cp -R "$1"/. .', "copy", path])
    if res.return_code:
        fail("copying %s: %s" % (path, res.stderr))
    for old, new in ctx.attr.replace.items():
        res = ctx.execute(["sh", "-c", 'grep -rlF "$1" . | xargs -r sed -i "s|$1|$2|g"', "replace", old, new])
        if res.return_code:
            fail("rewriting %s: %s" % (path, res.stderr))

debian_rules = repository_rule(
    implementation = _debian_rules_impl,
    doc = "A Bazel rule set installed by a Debian package, copied, with text replacements.",
    attrs = {
        "path": attr.string(mandatory = True),
        "package": attr.string(mandatory = True),
        "replace": attr.string_dict(),
    },
)

_COVERAGE_TOOLS_BUILD = """
# `bazel test` asks for these two targets. Without a download site there is no
# coverage tooling: they only say so, and `bazel coverage` is not supported.
package(default_visibility = ["//visibility:public"])

sh_binary(name = "coverage_report_generator", srcs = ["unsupported.sh"])

sh_binary(name = "lcov_merger", srcs = ["unsupported.sh"])
"""

def _coverage_tools_stub_impl(ctx):
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    ctx.file("BUILD.bazel", _COVERAGE_TOOLS_BUILD)
    ctx.file("unsupported.sh", "#!/bin/sh\necho 'coverage is not supported in this workspace' >&2\nexit 1\n", executable = True)

coverage_tools_stub = repository_rule(
    implementation = _coverage_tools_stub_impl,
    doc = "Stands in for @remote_coverage_tools, which Bazel would download.",
)
