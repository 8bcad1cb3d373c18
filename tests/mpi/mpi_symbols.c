/* Symbol completeness: the address of every MPI_X and PMPI_X that
 * include/weft/mpi_functions.h lists. Linking this program against libmpi
 * fails, naming the function, if any of them is declared but not defined.
 * Running it checks that none of the addresses is null (a weak reference
 * left unresolved). */
#include <mpi.h>
#include <stdio.h>

typedef void (*any_fn)(void);

static const struct entry {
    const char *name;
    any_fn mpi, pmpi;
} entries[] = {
#define WEFT_MPI_FN(ret, name, args) {#name, (any_fn)MPI_##name, (any_fn)PMPI_##name},
#include "weft/mpi_functions.h"
#undef WEFT_MPI_FN
};

int main(void)
{
    int n = (int)(sizeof entries / sizeof entries[0]), missing = 0;
    for (int i = 0; i < n; i++) {
        if (!entries[i].mpi || !entries[i].pmpi) {
            printf("missing: MPI_%s\n", entries[i].name);
            missing++;
        }
    }
    printf("%d functions, %d missing\n", n, missing);
    return missing ? 1 : 0;
}
