// Recordings waiting to be uploaded, by capture id, in IndexedDB: they survive a reload or a
// closed app while the phone is offline, and are deleted once storage has them.

const DB = "capture-audio";
const STORE = "recordings";

function open(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function transact<T>(mode: IDBTransactionMode, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await new Promise<T>((resolve, reject) => {
      const request = act(db.transaction(STORE, mode).objectStore(STORE));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  } finally {
    db.close();
  }
}

export function saveAudio(id: string, audio: Blob): Promise<IDBValidKey> {
  return transact("readwrite", (store) => store.put(audio, id));
}

export function loadAudio(id: string): Promise<Blob | undefined> {
  return transact("readonly", (store) => store.get(id));
}

export function dropAudio(id: string): Promise<undefined> {
  return transact("readwrite", (store) => store.delete(id));
}
