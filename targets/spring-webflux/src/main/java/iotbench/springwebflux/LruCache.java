package iotbench.springwebflux;

import java.util.LinkedHashMap;
import java.util.Map;

/** A small in-process LRU: an access-ordered LinkedHashMap behind one lock. */
final class LruCache<K, V> {
    private final LinkedHashMap<K, V> map;

    LruCache(int capacity) {
        this.map = new LinkedHashMap<>(capacity * 4 / 3 + 1, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > capacity;
            }
        };
    }

    synchronized V get(K key) {
        return map.get(key);
    }

    synchronized void put(K key, V value) {
        map.put(key, value);
    }
}
