//! Where a row group's finished pages wait until the group is written.
//!
//! Parquet's writer buffers every column's pages until the row group ends,
//! because a column chunk must be contiguous in the file. Its default store
//! keeps each page's buffer as it came from the encoder, and a compressed
//! page's buffer was reserved for zstd's worst case (`compress_bound`, ~1 MiB
//! for a 1 MiB page) and then filled to ~160 KB; a page header sits in a
//! 1 KiB buffer for ~30 bytes. On the main job that slack was the largest
//! part of the sink's heap (~11-15 MB of ~28 MB at its peak, heaptrack). This
//! store keeps an exact-size copy of each page instead, and lets the large
//! buffer go back to the allocator at once, where the next page reuses it.

use bytes::Bytes;
use parquet::arrow::arrow_writer::{PageKey, PageStore, PageStoreArgs, PageStoreFactory};
use parquet::errors::{ParquetError, Result};

/// Holds each page as an exact-size copy, released when taken.
#[derive(Debug, Default)]
pub(super) struct CompactPageStore {
    pages: Vec<Bytes>,
    resident: usize,
}

impl PageStore for CompactPageStore {
    fn put(&mut self, value: Bytes) -> Result<PageKey> {
        let key = PageKey::new(self.pages.len() as u64);
        self.resident += value.len();
        // A copy whatever `value` is: `Bytes` does not tell how much room
        // its buffer has, and a page is copied once (~1.3 MB per 8 MiB row
        // group of the main job, microseconds).
        self.pages.push(Bytes::copy_from_slice(&value));
        Ok(key)
    }

    fn take(&mut self, key: PageKey) -> Result<Bytes> {
        let page = self
            .pages
            .get_mut(key.get() as usize)
            .map(std::mem::take)
            .ok_or_else(|| ParquetError::General(format!("no page under key {}", key.get())))?;
        self.resident -= page.len();
        Ok(page)
    }

    fn memory_size(&self) -> usize {
        self.resident
    }
}

/// Makes a [`CompactPageStore`] for every column chunk.
#[derive(Debug, Default)]
pub(super) struct CompactPages;

impl PageStoreFactory for CompactPages {
    fn create(&self, _args: &PageStoreArgs<'_>) -> Result<Box<dyn PageStore>> {
        Ok(Box::new(CompactPageStore::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_come_back_as_they_went_in_and_are_released() {
        let mut store = CompactPageStore::default();
        let mut big = Vec::with_capacity(1 << 20);
        big.extend_from_slice(b"compressed page");
        let a = store.put(Bytes::from(big)).unwrap();
        let b = store.put(Bytes::from_static(b"header")).unwrap();
        assert_eq!(store.memory_size(), 21);
        assert_eq!(store.take(b).unwrap(), Bytes::from_static(b"header"));
        assert_eq!(store.memory_size(), 15);
        assert_eq!(
            store.take(a).unwrap(),
            Bytes::from_static(b"compressed page")
        );
        assert_eq!(store.memory_size(), 0);
        assert!(store.take(PageKey::new(7)).is_err());
    }
}
