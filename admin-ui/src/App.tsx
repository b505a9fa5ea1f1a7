import { useEffect, useState } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router-dom';
import { useAuth, storedKey } from './auth';
import { AppLayout } from './components/AppLayout';
import { LoadingState } from './components/States';
import { SignIn } from './pages/SignIn';
import { Overview } from './pages/Overview';
import { Works } from './pages/Works';
import { WorkPage } from './pages/WorkPage';
import { Matches } from './pages/Matches';
import { Evidence } from './pages/Evidence';
import { Tasks } from './pages/Tasks';
import { Holders } from './pages/Holders';
import { Notices } from './pages/Notices';
import { Removals } from './pages/Removals';
import { WatchedSites } from './pages/WatchedSites';

export function App() {
  const { session, restore } = useAuth();
  const location = useLocation();
  const [restoring, setRestoring] = useState(() => !session && storedKey() !== null);

  useEffect(() => {
    if (!restoring) return;
    restore().finally(() => setRestoring(false));
  }, [restoring, restore]);

  if (restoring) return <LoadingState />;
  if (!session) {
    if (location.pathname !== '/signin') {
      const next = location.pathname + location.search;
      return <Navigate to={`/signin?next=${encodeURIComponent(next)}`} replace />;
    }
    return <SignIn />;
  }
  return (
    <Routes>
      <Route path="/signin" element={<Navigate to="/" replace />} />
      <Route element={<AppLayout />}>
        <Route path="/" element={<Overview />} />
        <Route path="/works" element={<Works />} />
        <Route path="/works/:id" element={<WorkPage />} />
        <Route path="/matches" element={<Matches />} />
        <Route path="/matches/:id" element={<Evidence />} />
        <Route path="/holders" element={<Holders />} />
        <Route path="/holders/:owner" element={<Holders />} />
        <Route path="/notices" element={<Notices />} />
        <Route path="/removals" element={<Removals />} />
        <Route path="/watched" element={<WatchedSites />} />
        <Route path="/tasks" element={<Tasks />} />
        <Route path="*" element={<Navigate to="/" replace />} />
      </Route>
    </Routes>
  );
}
