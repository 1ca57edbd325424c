/* test_decide.c — the one access decision (decide.h) that the Linux
 * access-time layer asks at every access, held to the SBPL profile's
 * answer (sbpl_eval on the rules sbpl_build makes) on a table of paths:
 * protected names at depth 1 to 4, names that do not exist (the layer
 * decides names made during the run the same way), submodule and bare
 * repositories, deny_read globs below new directories, and near misses.
 * Then the structural repository rule: a probe that says "repository"
 * makes D/hooks and D/config read-only whatever D is called, and only
 * those. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "sbpl.h"
#include "tap.h"

static const char facts_json[] =
    "{\"format\":1,\"target\":\"linux\",\"arch\":\"x86_64\",\"home\":\"/h\","
    "\"path_dirs\":[\"/usr/bin\"],\"system_read\":[\"/usr\",\"/etc\"],"
    "\"root_links\":{},\"firmlinks\":{},"
    "\"bwrap\":{\"version\":\"0.8.0\",\"disable_userns\":true},"
    "\"paths\":{\"/h\":{\"type\":\"dir\",\"realpath\":\"/h\"},"
    "\"/h/proj\":{\"type\":\"dir\",\"realpath\":\"/h/proj\"}}}";

static const roots_t roots = {"/ws", "/sc", NULL, false};

/* clang-format off */
static const char *const table[] = {
    "/ws/a.txt", "/ws/sub/a.txt", "/ws/sub/.git/hooks/pre-commit", "/ws/sub/.git/hooks", "/ws/sub/.git/config",
    "/ws/sub/.git/config.lock", "/ws/sub/.git/objects/ab/cd", "/ws/sub/.mcp.json", "/ws/sub/mcp.json",
    "/ws/sub/.vscode/tasks.json", "/ws/sub/.vscode", "/ws/sub/vscode/tasks.json", "/ws/sub/.claude/commands/x.md",
    "/ws/sub/.claude/other/x.md", "/ws/sub/deeper/.profile", "/ws/sub/deeper/profile.txt",
    "/ws/a/b/c/.bashrc", "/ws/a/b/c/.git/hooks/post-checkout", "/ws/.git/modules/lib/hooks/x",
    "/ws/.git/modules/lib/config", "/ws/.git/modules/lib/description", "/ws/.git/modules/a/b/hooks/x",
    "/ws/bare.git/hooks/x", "/ws/bare.git/config", "/ws/bare.git/description", "/ws/new/dir/k.secret",
    "/ws/new/dir/k.secret.txt", "/ws/new/k.secret/inner", "/ws/x/.env", "/ws/x/.envrc", "/sc/.bashrc",
    "/sc/a/b/.gitconfig", "/h/proj/.git/hooks/x", "/h/proj/src/k.secret", "/h/proj/src/a.c", "/h/other",
    "/usr/lib/x", "/etc/hosts", "/ws/.claude/agents/a.md", "/ws/.idea/workspace.xml",
    /* the names git reads config, hooks and objects through, and those
     * tools load implicitly (attacks 01, 02, 11) */
    "/ws/.git/commondir", "/ws/sub/.git/config.worktree", "/ws/.git/worktrees/w/commondir",
    "/ws/.git/worktrees/w/gitdir", "/ws/.git/worktrees/w/config.worktree", "/ws/.git/worktrees/w/HEAD",
    "/ws/.git/info/attributes", "/ws/.git/info/exclude", "/ws/.git/objects/info/alternates",
    "/ws/.git/objects/info/packs", "/ws/.claude/settings.json", "/ws/a/.claude/settings.local.json",
    "/ws/.claude/notes.md", "/ws/.cursor/mcp.json", "/ws/.npmrc", "/ws/a/.yarnrc.yml", "/ws/.zshenv",
    "/ws/.zlogin", "/ws/.bash_login", "/ws/.bash_logout", "/ws/.config/fish/config.fish", "/ws/.config/fish/x",
};
/* clang-format on */

static bool always_repo(void *ctx, const char *dir)
{
    (void)ctx;
    return strcmp(dir, "/ws/plain") != 0; /* every directory but one */
}

int main(void)
{
    const char *toml = "[filesystem]\n"
                       "allow_write = [\"~/proj\"]\n"
                       "deny_read = [\"**/*.secret\"]\n"
                       "deny_write = [\"**/.env\"]\n";
    diag_list_t d = {0};
    policy_t *pol = policy_build(source_new("t.toml", toml, strlen(toml)), TOML_1_1, &d);
    char *err = NULL;
    facts_t *facts = facts_from_json(facts_json, sizeof facts_json - 1, &err);
    if (!CHECK(pol && facts, "the policy and the facts load")) return tap_done();
    resolved_t *r = lattice_resolve(pol, facts);
    sbpl_t *sb = NULL;
    sbpl_build(r, facts, &d, &sb);
    if (!CHECK(sb != NULL, "the SBPL rules build")) return tap_done();

    int bad = 0;
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        fs_verdict_t v;
        level_t got = decide_path(r, &roots, table[i], NULL, NULL, &v);
        level_t want = sbpl_eval(sb, &roots, table[i], NULL, NULL);
        if (got != want) {
            printf("# %s: decide %s, SBPL %s\n", table[i], policy_level_name(got), policy_level_name(want));
            bad++;
        }
    }
    CHECK(bad == 0, "decide_path (no probe) and the SBPL profile agree on every path of the table");

    /* clang-format off */
    struct { const char *path; level_t want; } pin[] = {
        {"/ws/sub/.git/hooks/pre-commit", LVL_READ}, {"/ws/.git/modules/lib/hooks/x", LVL_READ},
        {"/ws/.git/modules/lib/config", LVL_READ},  {"/ws/bare.git/hooks/x", LVL_READ},
        {"/ws/bare.git/config", LVL_READ},          {"/ws/bare.git/description", LVL_WRITE},
        {"/ws/new/dir/k.secret", LVL_NONE},         {"/ws/sub/deeper/.profile", LVL_READ},
        {"/ws/sub/deeper/profile.txt", LVL_WRITE},
        {"/ws/.git/commondir", LVL_READ},           {"/ws/sub/.git/config.worktree", LVL_READ},
        {"/ws/.git/worktrees/w/commondir", LVL_READ}, {"/ws/.git/worktrees/w/gitdir", LVL_READ},
        {"/ws/.git/worktrees/w/config.worktree", LVL_READ}, {"/ws/.git/worktrees/w/HEAD", LVL_WRITE},
        {"/ws/.git/info/attributes", LVL_READ},     {"/ws/.git/info/exclude", LVL_WRITE},
        {"/ws/.git/objects/info/alternates", LVL_READ}, {"/ws/.claude/settings.json", LVL_READ},
        {"/ws/a/.claude/settings.local.json", LVL_READ}, {"/ws/.claude/notes.md", LVL_WRITE},
        {"/ws/.cursor/mcp.json", LVL_READ},         {"/ws/.npmrc", LVL_READ},
        {"/ws/a/.yarnrc.yml", LVL_READ},            {"/ws/.zshenv", LVL_READ},
        {"/ws/.zlogin", LVL_READ},                  {"/ws/.bash_login", LVL_READ},
        {"/ws/.bash_logout", LVL_READ},             {"/ws/.config/fish/config.fish", LVL_READ},
        {"/ws/.config/fish/x", LVL_WRITE},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof pin / sizeof *pin; i++) {
        char name[200];
        snprintf(name, sizeof name, "%s is %s", pin[i].path, policy_level_name(pin[i].want));
        CHECK(decide_path(r, &roots, pin[i].path, NULL, NULL, NULL) == pin[i].want, name);
    }

    /* the structural rule */
    fs_verdict_t v;
    CHECK(decide_path(r, &roots, "/ws/vendored/hooks/x", always_repo, NULL, &v) == LVL_READ &&
              v.builtin && strcmp(v.builtin, "protect.git_hooks") == 0,
          "a repository by structure: its hooks are read-only, named protect.git_hooks");
    CHECK(decide_path(r, &roots, "/ws/vendored/config", always_repo, NULL, &v) == LVL_READ &&
              v.builtin && strcmp(v.builtin, "protect.git_config") == 0,
          "and its config, named protect.git_config");
    CHECK(decide_path(r, &roots, "/ws/vendored/description", always_repo, NULL, NULL) == LVL_WRITE,
          "the rest of it stays writable");
    CHECK(decide_path(r, &roots, "/ws/plain/config", always_repo, NULL, NULL) == LVL_WRITE,
          "a config in a directory that is not a repository stays writable");
    CHECK(decide_path(r, &roots, "/ws/vendored/hooks/x", NULL, NULL, NULL) == LVL_WRITE,
          "without a probe (SBPL, explain) only the path patterns count");
    /* a path past any fixed buffer (attack 14): still decided, never waved through */
    buf_t deep = BUF_INIT;
    buf_adds(&deep, "/ws/vendored");
    while (deep.len < 6000) buf_adds(&deep, "/d");
    buf_adds(&deep, "/hooks/x");
    CHECK(decide_path(r, &roots, buf_cstr(&deep), always_repo, NULL, &v) == LVL_READ && v.builtin,
          "the structural rule holds on a path of 6,000 bytes");
    buf_free(&deep);
    CHECK(decide_redirects_repo_name("commondir") && !decide_redirects_repo_name("commondir2") &&
              !decide_redirects_repo_name("config"),
          "commondir is the one name that redirects a repository");
    buf_t t = BUF_INIT;
    decide_path(r, &roots, "/ws/sub/.mcp.json", NULL, NULL, &v);
    decide_rule_text(&v, &t);
    CHECK_STR(buf_cstr(&t), "protect.agent_config \"**/.mcp.json\"", "the deciding rule is named as explain names it");
    buf_free(&t);
    decide_path(r, &roots, "/ws/x/.env", NULL, NULL, &v);
    decide_rule_text(&v, &t);
    CHECK_STR(buf_cstr(&t), "t.toml:4:15 filesystem.deny_write \"**/.env\"", "a config rule with its location");
    buf_free(&t);

    sbpl_free(sb);
    lattice_free(r);
    facts_free(facts);
    policy_free(pol);
    diag_list_free(&d);
    return tap_done();
}
