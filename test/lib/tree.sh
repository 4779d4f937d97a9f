# Copies of the source tree for suites that need one (sourced, not run).

# copy_tree DEST: copies the tree at $PGSEM_ROOT to DEST: in a git checkout the tracked and
# untracked-but-not-ignored files as they are in the working tree, elsewhere everything but build
# products.
copy_tree() {
    local dest=$1
    mkdir -p "$dest" || return 1
    (
        cd "$PGSEM_ROOT" || exit 1
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
            git ls-files -z --cached --others --exclude-standard
        else
            find . \( -name .git -o -name results -o -name 'tmp_check*' -o -name output \
                      -o -name '*.o' -o -name '*.so' -o -name '*.bc' \) -prune -o \
                   -type f -print0
        fi | tar --null --ignore-failed-read -T - -cf - 2>/dev/null
    ) | tar -C "$dest" -xf -
}
