package iotbench.contract;

import java.util.LinkedHashMap;
import java.util.Map;

/** A small in-process LRU: an access-ordered LinkedHashMap behind one lock (get reorders, so reads lock too). */
public final class LruCache<K, V> {
    private final LinkedHashMap<K, V> map;

    public LruCache(int capacity) {
        this.map = new LinkedHashMap<>(capacity * 4 / 3 + 1, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > capacity;
            }
        };
    }

    public synchronized V get(K key) {
        return map.get(key);
    }

    public synchronized void put(K key, V value) {
        map.put(key, value);
    }
}
