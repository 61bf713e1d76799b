int broken(const void *a) { return }
