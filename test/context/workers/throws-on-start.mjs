// An index worker whose module fails to load (a missing dependency, a broken install).
throw new Error('cannot load the grammar');
