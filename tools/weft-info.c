/* weft-info: what this weft has and how it is set: version, drivers,
 * strategies, and every WEFT_* parameter with its default and the value in
 * this environment. With --markdown, the parameter table alone, as the
 * Markdown that docs/parameters.md holds (tests/check_params.sh compares
 * them, so the page cannot drift from the code). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "core/registry.h"
#include "weft/weft_rma.h"

/* Text for a cell of a Markdown table: the characters that would end the
 * cell or start markup (a '<' would open an HTML tag: "path.<rank>.json")
 * are escaped, so the page shows the help string as written. */
static void markdown_text(const char *s)
{
    for (; *s; s++) {
        if (strchr("\\|<>*`[]", *s))
            putchar('\\');
        putchar(*s);
    }
}

/* One table per owner of parameters: the engine, then each built-in driver
 * that reads any, in the registry's order (the order of weft__param_table,
 * which the plain listing prints). The environment plays no part: the
 * output is the same wherever this build runs. */
static void markdown_table(const char *title, const weft_param_desc_t *p, size_t n)
{
    static bool first = true;
    printf("%s### %s\n\n| variable | default | meaning |\n|---|---|---|\n", first ? "" : "\n",
           title);
    first = false;
    for (size_t i = 0; i < n; i++) {
        /* A default of one word is a value to type; one of several words
         * ("driver's own") says where the value comes from. */
        printf("| `%s` | ", p[i].name);
        if (strchr(p[i].deflt, ' '))
            markdown_text(p[i].deflt);
        else
            printf("`%s`", p[i].deflt);
        printf(" | ");
        markdown_text(p[i].help);
        printf(" |\n");
    }
}

static void print_markdown(void)
{
    size_t n;
    const weft_param_desc_t *p = weft__param_engine_table(&n);
    markdown_table("Engine", p, n);
    const weft_driver_ops_t *const *drv = weft__drivers_builtin(&n);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (drv[i]->params && drv[i]->params[k].name)
            k++;
        if (k) {
            char title[64];
            snprintf(title, sizeof title, "`%s` driver", drv[i]->name);
            markdown_table(title, drv[i]->params, k);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: weft-info [--markdown]\n"
               "Print weft's drivers, strategies and WEFT_* parameters.\n"
               "  --markdown  print only the parameter tables (name, default, meaning) as\n"
               "              Markdown, the same in every environment: docs/parameters.md\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--markdown")) {
        print_markdown();
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "weft-info: unknown option '%s' (see --help)\n", argv[1]);
        return 2;
    }
    printf("weft %s\n\n", WEFT_VERSION_STRING);
    printf("drivers (highest preference first within each reach):\n");
    size_t n;
    const weft_driver_ops_t *const *drv = weft__drivers_builtin(&n);
    for (size_t i = 0; i < n; i++) {
        unsigned r = drv[i]->reach;
        char reach[64] = "";
        const char *what[] = {"this process", "this node", "other nodes"};
        for (int k = 0; k < 3; k++)
            if (r & (1u << k))
                snprintf(reach + strlen(reach), sizeof reach - strlen(reach), "%s%s",
                         reach[0] ? ", " : "", what[k]);
        printf("  %-8s %s\n           reaches %s; preference %d%s%s%s\n", drv[i]->name,
               drv[i]->description, reach, drv[i]->preference,
               drv[i]->native_only ? "; between nodes only on a native fabric unless named" : "",
               drv[i]->strategy ? "; strategy " : "", drv[i]->strategy ? drv[i]->strategy : "");
    }
    printf("\nstrategies (WEFT_STRATEGY):\n");
    const weft__strategy_ops_t *const *st = weft__strategy_list(&n);
    for (size_t i = 0; i < n; i++)
        printf("  %s\n", st[i]->name);
    printf("\nparameters (environment):\n");
    const weft_param_desc_t *p = weft__param_table(&n);
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(p[i].name);
        printf("  %-20s = %-10s (default %s)\n      %s\n", p[i].name, v && *v ? v : "(unset)",
               p[i].deflt, p[i].help);
    }
    /* What OpenSHMEM programs (libshmem) get. */
    const char *heap = getenv("SHMEM_SYMMETRIC_SIZE");
    printf(
        "\none-sided memory (OpenSHMEM):\n"
        "  SHMEM_SYMMETRIC_SIZE = %-10s (default %zuM)\n"
        "      bytes of symmetric heap per PE (K, M, G suffixes; SMA_SYMMETRIC_SIZE too)\n"
        "  PEs on this node: the heap and static data mapped, put/get are copies, "
        "atomics CPU atomics\n"
        "  PEs on other nodes (or all, WEFT_RMA_MAP=0): requests served by their progress engine\n",
        heap && *heap ? heap : "(unset)", WEFT_RMA_HEAP_DEFAULT >> 20);
    return 0;
}
